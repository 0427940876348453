/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-deps-par.c - the derivation with its interval maps on
 * worker threads (deps_engine_set_threads()) reports exactly the edges one
 * thread reports, in the same order, with the same labels: on a hand-built
 * stream (labels over two buffers owned by different workers, whole
 * buffers, overlapping accesses of one event, long names, operands, bad
 * strings, semaphores) and on a generated one; an edge callback's error
 * stops both the same way; and a store finished with NX_DEPS_THREADS=1 and
 * with several threads holds the same edge_blocks, edge_outs, edge_crit and
 * edge_labels bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/store.h"
#include "deps/deps.h"
#include "deps/deps-int.h"
#include "tests/tap.h"

static struct tc_buf got;	/* the edges in report order */
static struct tc_buf bads;	/* the bad strings in report order (they come at parse time) */
static int nbad;
static int64_t fail_after = -1;	/* the callbacks fail after this many edges */
static int64_t nedges;

static int
count_edge(void)
{
	if (fail_after >= 0 && nedges >= fail_after)
		return -ENOSPC;
	nedges++;
	return 0;
}

static int
on_edge(void *ctx, int64_t src, int64_t dst, int kind, const char *label, size_t len)
{
	tc_buf_printf(&got, "%lld>%lld:%d:%.*s\n", (long long)src, (long long)dst, kind, (int)len,
		      label);
	return count_edge();
}

static int
on_parts(void *ctx, int64_t src, int64_t dst, int kind, const struct deps_label *l)
{
	tc_buf_printf(&got, "%lld>%lld:%d:#%u %.*s|%llu|%llu\n", (long long)src, (long long)dst,
		      kind, l->name_id, (int)l->len, l->name, (unsigned long long)l->a,
		      (unsigned long long)l->b);
	return count_edge();
}

static void
on_bad(void *ctx, int64_t eid, const char *what, const char *text)
{
	nbad++;
	tc_buf_printf(&bads, "bad %lld %s %s\n", (long long)eid, what, text);
}

struct ev {
	int64_t ts, dur;
	char *args;
};

struct result {
	char *text;		/* the edges in report order, then the bad strings */
	int rc;			/* of the last deps_engine_event() or of finish */
	size_t live;
};

/* Run @n events (ids 1..n, in processing order) on @threads threads. */
static struct result
run(const struct ev *evs, int n, int threads, bool parts)
{
	struct deps_engine *e = deps_engine_new(on_edge, on_bad, NULL);
	struct result r = { 0 };

	tc_buf_reset(&got);
	tc_buf_adds(&got, "");
	tc_buf_reset(&bads);
	tc_buf_adds(&bads, "");
	nedges = 0;
	if (parts)
		deps_engine_set_parts(e, on_parts);
	if (deps_engine_set_threads(e, threads) < 0)
		r.rc = -999;
	for (int i = 0; i < n && !r.rc; i++)
		r.rc = deps_engine_event(e, i + 1, evs[i].ts, evs[i].dur, evs[i].args,
					 evs[i].args ? strlen(evs[i].args) : 0);
	if (!r.rc)
		r.rc = deps_engine_finish(e);
	if (!r.rc)
		r.live = deps_engine_live(e);
	deps_engine_free(e);
	tc_buf_adds(&got, bads.data);
	r.text = tc_xstrdup(got.data);
	return r;
}

#define LONGNAME "a_buffer_with_a_name_too_long_for_a_label_in_parts_0123456789_" \
	"0123456789_0123456789_0123456789_0123456789_0123456789_0123456789_0123456789_end"

static char *hand_args[] = {
	"{\"writes\": [\"B[0:64]\", \"A[0:64]\"], \"signals\": [\"S\"]}",
	"{\"reads\": [\"A[0:64]\", \"B[0:64]\"]}",	/* flow from 1 over A and B: one label */
	"{\"reads\": [\"A[0:32]\", \"A[0:16]\", \"A[8:48]\"], \"waits\": [\"S>=1\"]}",
	"{\"writes\": [\"A\"], \"reads\": [\"C\"]}",	/* whole buffers */
	NULL,
	"{\"name\": \"no accesses\"}",
	"{\"writes\": [\"B[32:96]\", \"C[0:8]\", \"" LONGNAME "[0:4096]\"], \"signals\": [\"S\"]}",
	"{\"reads\": [\"" LONGNAME "[100:200]\", \"B[0:128]\", \"A[5:6]\"]}",
	"{\"writes\": [\"" LONGNAME "\", \"D[0:1]\", \"A[0:0x40]\"], \"waits\": [\"S>=2\"]}",
	"{\"reads\": [\"bad[\", \"A[9:3]\", \"D\"], \"writes\": [\"E[0:8]\", 7]}",
	"{\"operands\": \"S[1] (Tensor)++@complete src=fp16@0x5600[1,0,0][3,1,1] "
	"dst=fp16@0x5700[1,0,0][3,1,1]\"}",
	"{\"operands\": \"src=fp16@0x5700[1,0,0][3,1,1] dst=fp16@0x5600[1,0,0][3,1,1] "
	"$S[1]>=1\"}",
	"{\"writes\": [\"B[0:128]\", \"C\", \"D\", \"E\", \"A\"], \"reads\": [\"F[0:8]\"]}",
	"{\"reads\": [\"A\", \"B\", \"C\", \"D\", \"E\", \"F\", \"" LONGNAME "\"]}",
	"{\"writes\": [\"F[0:4]\", \"F[4:8]\"], \"waits\": [\"S>=9\", \"T>=1\"]}",
};

/* A generated stream: @n events over @nbuf buffers (one with a long name), seed @seed. */
static struct ev *
generate(int n, int nbuf, uint64_t seed)
{
	struct ev *v = tc_xcalloc((size_t)n, sizeof(*v));
	uint64_t r = seed;

	for (int i = 0; i < n; i++) {
		struct tc_buf b;
		int nr, nw;
		unsigned x;

		r = r * 6364136223846793005ULL + 1442695040888963407ULL;
		x = (unsigned)(r >> 33);
		v[i].ts = i * 10;
		v[i].dur = (int64_t)(x % 7) * 5;
		if (x % 11 == 0)
			continue;	/* no args */
		tc_buf_init(&b);
		tc_buf_adds(&b, "{\"reads\": [");
		nr = (int)(x >> 4) % 4;
		nw = (int)(x >> 6) % 3;
		for (int k = 0; k < nr + nw; k++) {
			unsigned y, buf, lo, len;

			r = r * 6364136223846793005ULL + 1442695040888963407ULL;
			y = (unsigned)(r >> 33);
			buf = y % (unsigned)nbuf;
			lo = (y >> 8) % 64 * 32;
			len = 32 * (1 + (y >> 14) % 3);
			if (k == nr)
				tc_buf_adds(&b, "], \"writes\": [");
			else if (k)
				tc_buf_adds(&b, ", ");
			if (buf == 1)
				tc_buf_adds(&b, "\"" LONGNAME);
			else
				tc_buf_printf(&b, "\"buf%u", buf);
			if ((y >> 20) % 16)
				tc_buf_printf(&b, "[%u:%u]\"", lo, lo + len);
			else
				tc_buf_adds(&b, "\"");	/* the whole buffer */
		}
		if (nr + nw == nr)
			tc_buf_adds(&b, "], \"writes\": [");
		tc_buf_adds(&b, "]");
		if ((x >> 9) % 4 == 0)
			tc_buf_printf(&b, ", \"signals\": [\"S%u\"]", (x >> 11) % 3);
		if ((x >> 13) % 4 == 0)
			tc_buf_printf(&b, ", \"waits\": [\"S%u>=%d\"]", (x >> 15) % 3, 1 + i / 30);
		tc_buf_adds(&b, "}");
		v[i].args = tc_buf_steal(&b);
	}
	return v;
}

static void
free_evs(struct ev *v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i].args);
	free(v);
}

/* Every worker count against one thread, with and without labels in parts. */
static void
compare(const char *what, const struct ev *evs, int n)
{
	/* 2, 3: this thread reports the edges; 4 and more: a thread of its own */
	static const int threads[] = { 2, 3, 4, 8 };

	for (int parts = 0; parts < 2; parts++) {
		struct result one = run(evs, n, 0, parts);

		ok(one.rc == 0 && strlen(one.text) > 100, "%s, %s: one thread reports edges (%zu "
		   "bytes)", what, parts ? "parts" : "texts", strlen(one.text));
		for (size_t w = 0; w < TC_ARRAY_SIZE(threads); w++) {
			struct result r = run(evs, n, threads[w], parts);

			is_intf(r.rc, 0, "%s, %s, %d threads: no error", what,
			       parts ? "parts" : "texts", threads[w]);
			ok(!strcmp(r.text, one.text), "%s, %s, %d threads: the same edges in the "
			   "same order", what, parts ? "parts" : "texts", threads[w]);
			if (strcmp(r.text, one.text)) {
				size_t k = 0;

				while (r.text[k] && r.text[k] == one.text[k])
					k++;
				while (k > 0 && one.text[k - 1] != '\n')
					k--;
				printf("# first difference: one thread \"%.60s\", threads \"%.60s\"\n",
				       one.text + k, r.text + k);
			}
			is_intf((long long)r.live, (long long)one.live, "%s, %d threads: the same "
			       "live intervals", what, threads[w]);
			free(r.text);
		}
		free(one.text);
	}
}

/* An edge callback's error stops the run the same way with threads. */
static void
errors(const struct ev *evs, int n)
{
	struct result one = { 0 };

	fail_after = 1000;
	one = run(evs, n, 1, true);
	is_int(one.rc, -ENOSPC, "one thread: the callback's error is returned");
	for (int t = 2; t <= 4; t++) {	/* 2 and 3: the worker may be the one reporting */
		struct result r = run(evs, n, t, true);

		is_intf(r.rc, -ENOSPC, "%d threads: the callback's error is returned", t);
		ok(!strcmp(one.text, r.text), "%d threads: the same edges before the error", t);
		free(r.text);
	}
	fail_after = -1;
	free(one.text);
	for (int t = 2; t <= 4; t++) {	/* freed before finish, batches in flight: no hang, no leak */
		struct deps_engine *e = deps_engine_new(on_edge, NULL, NULL);

		is_intf(deps_engine_set_threads(e, t), 0, "%d threads start", t);
		for (int i = 0; i < n / 2; i++)
			deps_engine_event(e, i + 1, evs[i].ts, evs[i].dur, evs[i].args,
					  evs[i].args ? strlen(evs[i].args) : 0);
		is_int(deps_engine_set_threads(e, t), -EBUSY, "not once events came");
		deps_engine_free(e);
		ok(1, "freed with batches in flight");
	}
}

/* ---- the same through a store: the packed bytes ---- */

static int
build(const char *path, const struct ev *evs, int n, struct tc_err *err, int64_t *stored)
{
	struct st_writer *w;
	struct st_stats st;
	int dev, u[3], rc;

	rc = st_writer_open(&w, path, err);
	if (rc < 0)
		return rc;
	dev = st_device(w, "gpu:0", ST_DEV_GPU, NULL);
	for (int i = 0; i < 3; i++) {
		char k[16];

		snprintf(k, sizeof(k), "q%d", i);
		u[i] = st_unit(w, dev, k, ST_UNIT_STREAM, NULL);
	}
	for (int i = 0; i < n; i++) {
		struct st_event ev = { 0 };

		ev.unit = u[i % 3];
		ev.kind = ST_EV_SLICE;
		ev.ts = evs[i].ts / 3 * 3;	/* ties across units */
		ev.dur = evs[i].dur;
		ev.name = st_intern(w, "op", 2);
		ev.args = evs[i].args;
		ev.args_len = evs[i].args ? strlen(evs[i].args) : 0;
		if (st_event_add(w, &ev) < 0) {
			st_writer_abort(w);
			return -EIO;
		}
	}
	rc = st_writer_finish(w, &st, err);
	*stored = 0;
	for (int k = 0; k < ST_EDGE_NKINDS; k++)
		*stored += st.edges[k];
	return rc;
}

/* The rows of @sql as text (blobs in hex), in the order SQLite gives them. */
static char *
dump(const char *path, const char *sql)
{
	struct tc_err err = { 0 };
	sqlite3 *db;
	sqlite3_stmt *q;
	struct tc_buf b;

	tc_buf_init(&b);
	tc_buf_adds(&b, "");
	if (st_trace_open(&db, path, &err) < 0)
		return tc_buf_steal(&b);
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
		while (sqlite3_step(q) == SQLITE_ROW) {
			for (int c = 0; c < sqlite3_column_count(q); c++) {
				const unsigned char *p = sqlite3_column_blob(q, c);
				int len = sqlite3_column_bytes(q, c);

				for (int k = 0; k < len; k++)
					tc_buf_printf(&b, "%02x", p[k]);
				tc_buf_adds(&b, c + 1 < sqlite3_column_count(q) ? "|" : "\n");
			}
		}
		sqlite3_finalize(q);
	}
	sqlite3_close(db);
	return tc_buf_steal(&b);
}

static void
store(const struct ev *evs, int n)
{
	static const char *sqls[] = {
		"SELECT id, ins FROM edge_blocks ORDER BY id",
		"SELECT id, outs FROM edge_outs ORDER BY id",
		"SELECT id, crit FROM edge_crit ORDER BY id",
		"SELECT id, texts FROM edge_labels ORDER BY id",
		"SELECT src, dst, kind, label FROM edges",
	};
	static const char *threads[] = { "1", "2", "3", "5" };
	char dir[] = "/tmp/nx-par-XXXXXX";
	char *want[TC_ARRAY_SIZE(sqls)], *path;
	struct tc_err err = { 0 };
	int64_t stored = 0;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	path = tc_xasprintf("%s/t.db", dir);
	for (size_t t = 0; t < TC_ARRAY_SIZE(threads); t++) {
		setenv("NX_DEPS_THREADS", threads[t], 1);
		unlink(path);
		is_intf(build(path, evs, n, &err, &stored), 0, "store finished with "
			"NX_DEPS_THREADS=%s", threads[t]);
		ok(stored >= 65536, "%lld edges", (long long)stored);
		for (size_t s = 0; s < TC_ARRAY_SIZE(sqls); s++) {
			char *d = dump(path, sqls[s]);

			if (t == 0) {
				want[s] = d;
				ok(strlen(d) > 1000, "NX_DEPS_THREADS=1: %s has rows", sqls[s]);
				continue;
			}
			ok(!strcmp(d, want[s]), "NX_DEPS_THREADS=%s: %s is the same bytes",
			   threads[t], sqls[s]);
			free(d);
		}
	}
	unsetenv("NX_DEPS_THREADS");
	for (size_t s = 0; s < TC_ARRAY_SIZE(sqls); s++)
		free(want[s]);
	unlink(path);
	rmdir(dir);
	free(path);
}

int
main(void)
{
	int nh = (int)TC_ARRAY_SIZE(hand_args);
	struct ev *hand = tc_xcalloc((size_t)nh, sizeof(*hand));
	struct ev *gen;
	int ngen = 30000;

	tc_buf_init(&got);
	tc_buf_init(&bads);
	for (int i = 0; i < nh; i++) {
		hand[i].ts = i * 100;
		hand[i].dur = 10 + (i * 37) % 50;
		hand[i].args = hand_args[i] ? tc_xstrdup(hand_args[i]) : NULL;
	}
	{	/* the hand-built answers that matter here, from one thread */
		struct result one = run(hand, nh, 0, true);

		ok(strstr(one.text, "1>2:0:B[0:64],A[0:64]\n") != NULL,
		   "one label over two buffers (of workers 0 and 1 with 3 threads), in first-seen "
		   "order");
		ok(strstr(one.text, "1>3:0:#1 A|0|48\n") != NULL,
		   "overlapping reads of one event: one run");
		ok(nbad > 0 && strstr(one.text, "bad 10 access string bad[") != NULL,
		   "bad strings reported");
		free(one.text);
	}
	compare("hand-built", hand, nh);
	gen = generate(ngen, 12, 42);
	compare("generated", gen, ngen);
	errors(gen, ngen);
	free_evs(gen, ngen);

	/* two edge partitions (65536 ids each) and 64k edges or more: packed ahead on a thread */
	gen = generate(70000, 7, 7);
	for (int i = 0; i < 70000; i++)
		if (i % 5) {	/* about 100k edges */
			free(gen[i].args);
			gen[i].args = NULL;
		}
	store(gen, 70000);
	free_evs(gen, 70000);
	free_evs(hand, nh);
	tc_buf_free(&got);
	tc_buf_free(&bads);
	return tap_done();
}
