/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-json.c - the JSON reader's pieces: the us -> ns number
 * parser, the value parser, the streaming scanner at every chunk size, and
 * small traces read end to end into a real trace store (SQLite file).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include <zlib.h>
#include "tests/tap.h"
#include "tests/unit/sql-int.h"
#include "store/library.h"
#include "ingest/ingest.h"
#include "ingest/json-int.h"

static void
test_numbers(void)
{
	static const struct { const char *s; int ret; int64_t ns; } cases[] = {
		{ "1", 0, 1000 },
		{ "0", 0, 0 },
		{ "1.5", 0, 1500 },
		{ "123.456", 0, 123456 },
		{ "4000000000000.123", 0, 4000000000000123LL },
		{ "1623143089861234.567", 0, 1623143089861234567LL },
		{ "0.0004", 0, 0 },
		{ "0.0005", 0, 1 },
		{ "0.9995", 0, 1000 },
		{ "-1.5", 0, -1500 },
		{ "-0.0005", 0, -1 },
		{ "1.2345678", 0, 1235 },
		{ "1e3", 0, 1000000 },
		{ "2.5E-3", 0, 3 },
		{ "", -EINVAL, 0 },
		{ "-", -EINVAL, 0 },
		{ "1.", -EINVAL, 0 },
		{ ".5", -EINVAL, 0 },
		{ "12a", -EINVAL, 0 },
		{ "abc", -EINVAL, 0 },
		{ "99999999999999999999", -ERANGE, 0 },
		{ "1e300", -ERANGE, 0 },
		/* the same bound, under 9e15 µs, written plainly or with an exponent */
		{ "8999999999999999", 0, INT64_C(8999999999999999000) },
		{ "8.9e15", 0, INT64_C(8900000000000000000) },
		{ "-8.9e15", 0, -INT64_C(8900000000000000000) },
		{ "9000000000000000", -ERANGE, 0 },
		{ "9e15", -ERANGE, 0 },
		{ "9.1e15", -ERANGE, 0 },
		{ "-9.1e15", -ERANGE, 0 },
	};
	size_t i;

	for (i = 0; i < TC_ARRAY_SIZE(cases); i++) {
		int64_t ns = -42;
		int ret = ij_us_to_ns(cases[i].s, strlen(cases[i].s), &ns);
		char name[128];

		snprintf(name, sizeof(name), "us_to_ns(\"%s\") returns %d", cases[i].s,
			 cases[i].ret);
		is_int(ret, cases[i].ret, name);
		if (!ret && !cases[i].ret) {
			snprintf(name, sizeof(name), "us_to_ns(\"%s\") = %lld", cases[i].s,
				 (long long)cases[i].ns);
			is_int(ns, cases[i].ns, name);
		}
	}
}

static void
test_values(void)
{
	static const char *const good[] = {
		"{}", "[]", "{\"a\":[1,2,{\"b\":null}],\"c\":\"x\\\"y\\u00e9\"}", "-0.5e+3",
		"true", "false", "null", "\"\\ud83d\\ude00\"", "  {\"k\" : 1 }  ",
	};
	static const char *const badv[] = {
		"{", "[1,]", "{\"a\"}", "{\"a\":}", "{a:1}", "\"abc", "\"\\x\"", "tru", "01x",
		"[1 2]", "{\"a\":1,}", "\"\\u12g4\"", "-", "{\"a\":1]",
	};
	const char *why, *at, *end;
	struct ij_val v;
	struct tc_buf b;
	size_t i;

	for (i = 0; i < TC_ARRAY_SIZE(good); i++) {
		end = ij_value(good[i], good[i] + strlen(good[i]), &v, &why, &at);
		ok(end && ij_ws(end, good[i] + strlen(good[i])) == good[i] + strlen(good[i]),
		   "valid JSON accepted: %s", good[i]);
	}
	for (i = 0; i < TC_ARRAY_SIZE(badv); i++) {
		end = ij_value(badv[i], badv[i] + strlen(badv[i]), &v, &why, &at);
		ok(!end || end != badv[i] + strlen(badv[i]), "invalid JSON rejected: %s", badv[i]);
	}
	tc_buf_init(&b);
	end = ij_value(good[7], good[7] + strlen(good[7]), &v, &why, &at);
	ij_str_decode(&v, &b);
	is_str(b.data, "\xf0\x9f\x98\x80", "surrogate pair decodes to UTF-8");
	tc_buf_reset(&b);
	v.p = "a\\nb\\u00e9\\/";
	v.n = strlen(v.p);
	v.esc = true;
	ij_str_decode(&v, &b);
	is_str(b.data, "a\nb\xc3\xa9/", "escapes decode");
	tc_buf_free(&b);
	{
		/* A deep nest is refused, not a stack overflow. */
		size_t n = 100000;
		char *deep = malloc(n);

		memset(deep, '[', n);
		ok(!ij_value(deep, deep + n, &v, &why, &at), "100000-deep nesting refused (%s)",
		   why);
		free(deep);
	}
}

/* ---- scanner ---- */

struct got {
	struct tc_buf ev;	/* events joined by '\n' */
	struct tc_buf meta;	/* key=value joined by '\n' */
	uint64_t n;
	uint64_t last_off;
};

static int
got_event(void *ctx, const char *p, size_t n, uint64_t index, uint64_t off)
{
	struct got *g = ctx;

	tc_buf_add(&g->ev, p, n);
	tc_buf_addc(&g->ev, '\n');
	g->n++;
	g->last_off = off;
	return 0;
}

static int
got_meta(void *ctx, const char *key, size_t keylen, const char *val, size_t vallen, uint64_t off)
{
	struct got *g = ctx;

	tc_buf_add(&g->meta, key, keylen);
	tc_buf_addc(&g->meta, '=');
	if (val)
		tc_buf_add(&g->meta, val, vallen);
	else
		tc_buf_adds(&g->meta, "(big)");
	tc_buf_addc(&g->meta, '\n');
	return 0;
}

static const struct ij_scan_ops got_ops = { .event = got_event, .meta = got_meta };

/* Scan @doc in @chunk-byte pieces.  Returns the scanner's result. */
static int
scan_chunked(const char *doc, size_t len, size_t chunk, struct got *g, struct tc_err *err)
{
	struct ij_scan s;
	size_t i;
	int ret = 0;

	memset(g, 0, sizeof(*g));
	tc_buf_init(&g->ev);
	tc_buf_init(&g->meta);
	tc_err_clear(err);
	ij_scan_init(&s, &got_ops, g, "mem.json");
	for (i = 0; i < len && !ret; i += chunk)
		ret = ij_scan_feed(&s, doc + i, TC_MIN(chunk, len - i), err);
	if (!ret)
		ret = ij_scan_end(&s, err);
	ij_scan_free(&s);
	return ret;
}

static void
got_free(struct got *g)
{
	tc_buf_free(&g->ev);
	tc_buf_free(&g->meta);
}

static void
test_scanner(void)
{
	static const char obj[] =
		"\xef\xbb\xbf{\"schemaVersion\": 1, \"deviceProperties\": [{\"name\": \"V100\"}],\n"
		" \"traceEvents\": [\n"
		"  {\"ph\": \"X\", \"name\": \"a}]\\\"[{\", \"ts\": 1.5, \"dur\": 2},\n"
		"  {\"ph\":\"i\",\"args\":{\"x\":[1,{\"y\":\"\\\\\"}]}} ,\n"
		"  {}\n"
		" ],\n"
		" \"traceName\": \"t\\\"n\", \"baseTimeNanoseconds\": 1700000000000000000,"
		" \"flag\": true}\n";
	static const char want_ev[] =
		"{\"ph\": \"X\", \"name\": \"a}]\\\"[{\", \"ts\": 1.5, \"dur\": 2}\n"
		"{\"ph\":\"i\",\"args\":{\"x\":[1,{\"y\":\"\\\\\"}]}}\n"
		"{}\n";
	static const char want_meta[] =
		"schemaVersion=1\n"
		"deviceProperties=[{\"name\": \"V100\"}]\n"
		"traceName=\"t\\\"n\"\n"
		"baseTimeNanoseconds=1700000000000000000\n"
		"flag=true\n";
	static const char arr[] = "[{\"ph\":\"B\"},{\"ph\":\"E\"},";	/* no ']' */
	struct tc_err err;
	struct got g;
	size_t chunk;
	int bad_chunks = 0, ret;

	for (chunk = 1; chunk <= sizeof(obj); chunk++) {
		ret = scan_chunked(obj, sizeof(obj) - 1, chunk, &g, &err);
		if (ret || g.n != 3 || strcmp(g.ev.data, want_ev) || strcmp(g.meta.data, want_meta)) {
			if (!bad_chunks++)
				printf("# chunk %zu: ret %d (%s)\n# events:\n%s# meta:\n%s", chunk,
				       ret, err.msg, g.ev.data ? g.ev.data : "",
				       g.meta.data ? g.meta.data : "");
		}
		got_free(&g);
	}
	is_int(bad_chunks, 0, "Object form scans identically at every chunk size");

	bad_chunks = 0;
	for (chunk = 1; chunk <= sizeof(arr); chunk++) {
		ret = scan_chunked(arr, sizeof(arr) - 1, chunk, &g, &err);
		if (ret || g.n != 2)
			bad_chunks++;
		got_free(&g);
	}
	is_int(bad_chunks, 0, "Array form with a trailing comma and no ']' is accepted");

	{
		/* A top-level value over IJ_META_MAX is skipped, not buffered. */
		struct tc_buf big;
		size_t k;

		tc_buf_init(&big);
		tc_buf_adds(&big, "{\"stackFrames\":{\"a\":\"");
		for (k = 0; k < IJ_META_MAX; k++)
			tc_buf_addc(&big, 'x');
		tc_buf_adds(&big, "\"},\"traceEvents\":[{}],\"n\":1}");
		ret = scan_chunked(big.data, big.len, 4096, &g, &err);
		is_str(g.meta.data, "stackFrames=(big)\nn=1\n", "metadata over 64 KiB is skipped");
		ok(!ret && g.n == 1, "events after a big metadata value are still found");
		got_free(&g);
		tc_buf_free(&big);
	}
	ret = scan_chunked("[1, \"x\", null]", 14, 3, &g, &err);
	ok(!ret && g.n == 3, "scalar elements are handed out (to be counted bad)");
	got_free(&g);
	ret = scan_chunked("[{\"a\":1}, 12", 12, 5, &g, &err);
	ok(!ret && g.n == 2, "a scalar ended by EOF in Array form is handed out");
	got_free(&g);
}

static void
scan_fails(const char *doc, const char *want, const char *name)
{
	struct tc_err err;
	struct got g;
	int ret = scan_chunked(doc, strlen(doc), 2, &g, &err);

	ok(ret < 0 && strstr(err.msg, want) && strstr(err.msg, "mem.json"), "%s", name);
	if (ret >= 0 || !strstr(err.msg, want))
		printf("#   ret %d, message \"%s\", want \"%s\"\n", ret, err.msg, want);
	got_free(&g);
}

static void
test_scanner_errors(void)
{
	scan_fails("", "empty file", "empty input");
	scan_fails("   \n", "empty file", "white space only");
	scan_fails("hello", "byte 0: not JSON", "not JSON");
	scan_fails("42", "wrong top-level shape", "a number at the top");
	scan_fails("\"trace\"", "wrong top-level shape", "a string at the top");
	scan_fails("{\"a\": 1}", "no \"traceEvents\"", "object without traceEvents");
	scan_fails("{\"traceEvents\": 5}", "not an array", "traceEvents not an array");
	scan_fails("[{\"ph\":\"X\",\"ts\":1", "truncated JSON: event object starting at byte 1",
		   "cut inside an event");
	scan_fails("[{\"ph\":\"X\",\"name\":\"ab", "truncated JSON", "cut inside a string");
	scan_fails("{\"traceEvents\":[{}", "byte 18: truncated JSON", "Object form cut after an event");
	scan_fails("{\"traceEvents\":[{}]", "top-level object is not closed",
		   "Object form missing '}'");
	scan_fails("[{}] x", "byte 5: invalid JSON: data after", "trailing garbage");
	scan_fails("[{} {}]", "expected ',' or ']'", "missing comma");
	scan_fails("{\"traceEvents\":[] \"x\":1}", "byte 18: invalid JSON: expected ',' or '}'",
		   "missing comma between keys");
}

/* ---- end to end into a store ---- */

struct e2e {
	struct st_stats st;
	sqlite3 *db;
	char path[256];
	int ret;
	struct tc_err err;
};

static int e2e_run_opts(struct e2e *x, const char *doc, size_t len, const struct ing_opts *opts,
			size_t chunk, int thread);

static int
e2e_run(struct e2e *x, const char *doc, size_t len)
{
	return e2e_run_opts(x, doc, len, NULL, 0, -1);
}

/*
 * @chunk: read size (0: the reader's default, larger than every doc here);
 * @thread: read on a thread (1), inline (0), or as ing_json_read() does (-1).
 */
static int
e2e_run_opts(struct e2e *x, const char *doc, size_t len, const struct ing_opts *opts,
	     size_t chunk, int thread)
{
	struct st_writer *w = NULL;
	struct tc_input *in = NULL;
	struct tc_err err2;

	memset(x, 0, sizeof(*x));
	snprintf(x->path, sizeof(x->path), "%s/test-json-%d.db",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	x->ret = st_writer_open(&w, x->path, &x->err);
	if (x->ret)
		return x->ret;
	x->ret = tc_input_open_mem(&in, doc, len, "e2e.json", &x->err);
	if (!x->ret)
		x->ret = ing_json_read_chunks(w, in, opts, chunk, thread, &x->err);
	tc_input_close(in);
	if (x->ret) {
		st_writer_abort(w);
		return x->ret;
	}
	tc_err_clear(&err2);
	x->ret = st_writer_finish(w, &x->st, &x->err);
	if (x->ret)
		return x->ret;
	x->ret = st_trace_open(&x->db, x->path, &x->err);
	return x->ret;
}

static void
e2e_close(struct e2e *x)
{
	if (x->db)
		sqlite3_close(x->db);
	unlink(x->path);
}


static char *
q_str(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	char *v = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return tc_xstrdup(sqlite3_errmsg(db));
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		v = tc_xstrdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return v ? v : tc_xstrdup("(null)");
}

#define IS_Q(db, sql, want, name) do { char *s_ = q_str(db, sql); is_str(s_, want, name); \
	free(s_); } while (0)

/* A small trace with a bit of everything (test_e2e() says what). */
static const char e2e_doc[] =
	"{\"traceEvents\":[\n"
	"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,\"tid\":0,\"args\":{\"name\":\"trainer\"}},\n"
	"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":7,\"args\":{\"name\":\"main \"}},\n"
	"{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":0,\"tid\":0,\"args\":{\"labels\":\"GPU 0\"}},\n"
	"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,\"tid\":99,\"args\":{\"name\":\"no events\"}},\n"
	"{\"ph\":\"X\",\"name\":\"step\",\"cat\":\"cpu_op\",\"pid\":100,\"tid\":7,\"ts\":\"1000.0015\",\"dur\":50.25,\"args\":{\"External id\":1}},\n"
	"{\"ph\":\"X\",\"name\":\"cudaLaunchKernel\",\"cat\":\"cuda_runtime\",\"pid\":100,\"tid\":7,\"ts\":1010,\"dur\":5},\n"
	"{\"ph\":\"s\",\"name\":\"ac2g\",\"cat\":\"ac2g\",\"id\":42,\"pid\":100,\"tid\":7,\"ts\":1010},\n"
	"{\"ph\":\"f\",\"name\":\"ac2g\",\"cat\":\"ac2g\",\"id\":42,\"bp\":\"e\",\"pid\":0,\"tid\":7,\"ts\":1020},\n"
	"{\"ph\":\"f\",\"name\":\"ac2g\",\"cat\":\"ac2g\",\"id\":43,\"bp\":\"e\",\"pid\":100,\"tid\":7,\"ts\":1012},\n"
	"{\"ph\":\"X\",\"name\":\"gemm\",\"cat\":\"kernel\",\"pid\":0,\"tid\":7,\"ts\":1020,\"dur\":30},\n"
	"{\"ph\":\"B\",\"name\":\"outer\",\"pid\":\"host\",\"tid\":\"main\",\"ts\":2000},\n"
	"{\"ph\":\"B\",\"name\":\"inner\",\"pid\":\"host\",\"tid\":\"main\",\"ts\":2001,\"args\":{\"k\":\"v\"}},\n"
	"{\"ph\":\"s\",\"name\":\"hop\",\"cat\":\"c\",\"id\":\"0x1f\",\"pid\":\"host\",\"tid\":\"main\",\"ts\":2002},\n"
	"{\"ph\":\"E\",\"pid\":\"host\",\"tid\":\"main\",\"ts\":2005},\n"
	"{\"ph\":\"f\",\"name\":\"hop\",\"cat\":\"c\",\"id\":\"0x1f\",\"pid\":\"host\",\"tid\":\"other\",\"ts\":2003},\n"
	"{\"ph\":\"X\",\"name\":\"later\",\"pid\":\"host\",\"tid\":\"other\",\"ts\":2004,\"dur\":1},\n"
	"{\"ph\":\"E\",\"pid\":\"host\",\"tid\":\"nobody\",\"ts\":2006},\n"
	"{\"ph\":\"i\",\"name\":\"mark\",\"s\":\"g\",\"pid\":\"\",\"tid\":\"\",\"ts\":2100},\n"
	"{\"ph\":\"C\",\"name\":\"mem\",\"id\":3,\"pid\":100,\"ts\":2200,\"args\":{\"used\":5,\"free\":\"7.5\",\"note\":\"x\"}},\n"
	"{\"ph\":\"b\",\"name\":\"req\",\"cat\":\"net\",\"id\":9,\"pid\":100,\"tid\":1,\"ts\":3000},\n"
	"{\"ph\":\"n\",\"name\":\"req\",\"cat\":\"net\",\"id\":9,\"pid\":100,\"tid\":1,\"ts\":3001},\n"
	"{\"ph\":\"e\",\"name\":\"req\",\"cat\":\"net\",\"id\":9,\"pid\":100,\"tid\":2,\"ts\":3010},\n"
	"{\"ph\":\"X\",\"name\":\"v2a\",\"pid\":5,\"tid\":5,\"ts\":4000,\"dur\":1,\"bind_id\":77,\"flow_out\":true},\n"
	"{\"ph\":\"X\",\"name\":\"v2b\",\"pid\":5,\"tid\":6,\"ts\":4005,\"dur\":1,\"bind_id\":77,\"flow_in\":true},\n"
	"{\"ph\":\"X\",\"name\":\"nodur\",\"pid\":5,\"tid\":5,\"ts\":4010},\n"
	"{\"ph\":\"X\",\"name\":\"negdur\",\"pid\":5,\"tid\":5,\"ts\":4010,\"dur\":-1},\n"
	"{\"name\":\"noph\",\"ts\":1},\n"
	"{\"ph\":\"i\",\"name\":\"nots\"},\n"
	"{\"ph\":\"O\",\"name\":\"object snapshot\",\"id\":\"0x1\",\"ts\":5},\n"
	"{\"ph\":\"X\",\"name\":\"open\",\"pid\":5,\"tid\":5,\"ts\":\"abc\",\"dur\":1},\n"
	"17,\n"
	"{\"ph\":\"B\",\"name\":\"never closed\",\"pid\":5,\"tid\":9,\"ts\":4500}\n"
	"],\"traceName\":\"unit\",\"displayTimeUnit\":\"ns\",\"big\":{\"a\":[1,2]}}";

static void
test_e2e(void)
{
	struct e2e x;
	char *s;

	if (e2e_run(&x, e2e_doc, sizeof(e2e_doc) - 1)) {
		ok(0, "end-to-end ingest: %s", x.err.msg);
		e2e_close(&x);
		return;
	}
	ok(1, "end-to-end ingest succeeded");
	/* X: step, cudaLaunchKernel, gemm, later, v2a, v2b = 6; B/E: inner, outer (closed at
	 * the end), never closed; async req = 1 */
	is_int(x.st.slices, 11, "slices (nodur: an unfinished X closed at the end)");
	is_int(x.st.instants, 2, "instants (global mark, async n)");
	is_int(x.st.counters, 2, "counter samples (two numeric series)");
	is_int(x.st.edges[ST_EDGE_FLOW], 3, "flow edges: ac2g 42, hop, v2 77");
	/* bad: negdur, noph, nots, ts "abc", 17 */
	is_int(x.st.bad_events, 5, "bad events counted");
	/* unmatched: outer + never closed + nodur (closed at the end), E on nobody, f-only 43 */
	is_int(x.st.unmatched, 5, "unmatched counted");
	is_int(q1(x.db, "SELECT ts FROM events e JOIN strings s ON s.id = e.name "
		     "WHERE s.s = 'step'"), 1000002, "string ts \"1000.0015\" -> 1000002 ns");
	is_int(q1(x.db, "SELECT dur FROM events e JOIN strings s ON s.id = e.name "
		     "WHERE s.s = 'step'"), 50250, "dur 50.25 -> 50250 ns");
	IS_Q(x.db, "SELECT args FROM events e JOIN strings s ON s.id = e.name WHERE s.s = 'step'",
	     "{\"External id\":1}", "args kept as JSON text");
	IS_Q(x.db, "SELECT count(*) FROM events e JOIN strings s ON s.id = e.name "
	     "WHERE s.s = 'cudaLaunchKernel' AND args IS NULL", "1", "no args -> NULL");
	IS_Q(x.db, "SELECT d.kind || ' ' || d.name FROM devices d WHERE d.key = 'pid:0'", "1 GPU 0",
	     "GPU device from process_labels");
	IS_Q(x.db, "SELECT u.kind || ' ' || u.name FROM units u JOIN devices d ON d.id = u.device_id "
	     "WHERE d.key = 'pid:0' AND u.key = 'tid:7'", "2 stream 7", "GPU tid is a stream");
	IS_Q(x.db, "SELECT count(*) FROM units WHERE name = 'no events'", "0",
	     "a named thread without events makes no unit");
	IS_Q(x.db, "SELECT d.kind || ' ' || d.name FROM devices d WHERE d.key = 'pid:100'",
	     "0 trainer", "process_name names the process");
	IS_Q(x.db, "SELECT u.kind || ' ' || u.name FROM units u JOIN devices d ON d.id = u.device_id "
	     "WHERE d.key = 'pid:100' AND u.key = 'tid:7'", "3 main", "thread_name, trimmed");
	IS_Q(x.db, "SELECT group_concat(name, ',') FROM (SELECT u.name FROM units u "
	     "WHERE u.kind = 5 ORDER BY u.name)", "mem[3].free,mem[3].used", "counter series names");
	IS_Q(x.db, "SELECT group_concat(value, ',') FROM (SELECT value FROM events WHERE kind = 2 "
	     "ORDER BY value)", "5.0,7.5", "counter values");
	IS_Q(x.db, "SELECT e.dur FROM events e JOIN strings s ON s.id = e.name WHERE s.s = 'req'",
	     "10000", "async b..e slice");
	IS_Q(x.db, "SELECT group_concat(a || '>' || b, ' ') FROM (SELECT sa.s a, sb.s b FROM edges g "
	     "JOIN events ea ON ea.id = g.src JOIN events eb ON eb.id = g.dst "
	     "JOIN strings sa ON sa.id = ea.name JOIN strings sb ON sb.id = eb.name "
	     "ORDER BY a)", "cudaLaunchKernel>gemm inner>later v2a>v2b",
	     "flows bind to enclosing / next slices");
	IS_Q(x.db, "SELECT group_concat(label, ' ') FROM (SELECT label FROM edges ORDER BY label)",
	     "ac2g:42 flow:77 hop:0x1f", "flow labels");
	s = q_str(x.db, "SELECT e.dur FROM events e JOIN strings s ON s.id = e.name "
		  "WHERE s.s = 'outer'");
	is_str(s, "2006000", "unmatched B closed at the end of the trace (4006 us)");
	free(s);
	IS_Q(x.db, "SELECT value FROM meta WHERE key = 'json.traceName'", "unit",
	     "metadata after traceEvents kept");
	IS_Q(x.db, "SELECT value FROM meta WHERE key = 'json.big'", "{\"a\":[1,2]}",
	     "small object metadata kept as JSON");
	e2e_close(&x);
}

/* Args keys that deps/ reads, as events.flags bit 0 (docs/dependencies.md). */
static const char access_doc[] =
	"[\n"
	"{\"ph\":\"X\",\"name\":\"r\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"reads\":[\"a\"]}},\n"
	"{\"ph\":\"X\",\"name\":\"w\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1,\"args\":{\"x\":[1,{\"y\":2}],\"writes\":[\"a\"]}},\n"
	"{\"ph\":\"X\",\"name\":\"sig\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1,\"args\":{\"signals\":[\"s\"]}},\n"
	"{\"ph\":\"X\",\"name\":\"wait\",\"pid\":1,\"tid\":1,\"ts\":7,\"dur\":1,\"args\":{\"waits\":[\"s>=1\"]}},\n"
	"{\"ph\":\"X\",\"name\":\"ops\",\"pid\":1,\"tid\":1,\"ts\":9,\"dur\":1,\"args\":{\"operands\":\"\"}},\n"
	"{\"ph\":\"X\",\"name\":\"nested\",\"pid\":1,\"tid\":1,\"ts\":11,\"dur\":1,\"args\":{\"x\":{\"reads\":[\"a\"]}}},\n"
	"{\"ph\":\"X\",\"name\":\"value\",\"pid\":1,\"tid\":1,\"ts\":13,\"dur\":1,\"args\":{\"k\":\"reads\",\"readsx\":1,\"Reads\":2}},\n"
	"{\"ph\":\"X\",\"name\":\"esc\",\"pid\":1,\"tid\":1,\"ts\":15,\"dur\":1,\"args\":{\"\\u0072eads\":[\"a\"]}},\n"
	"{\"ph\":\"X\",\"name\":\"escnot\",\"pid\":1,\"tid\":1,\"ts\":17,\"dur\":1,\"args\":{\"\\u0072ead\":[\"a\"]}},\n"
	"{\"ph\":\"B\",\"name\":\"be\",\"pid\":1,\"tid\":2,\"ts\":20},\n"
	"{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":21,\"args\":{\"writes\":[\"b\"]}},\n"
	"{\"ph\":\"B\",\"name\":\"be2\",\"pid\":1,\"tid\":2,\"ts\":22,\"args\":{\"k\":1}},\n"
	"{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":23,\"args\":{\"writes\":[\"b\"]}},\n"
	"{\"ph\":\"B\",\"name\":\"be3\",\"pid\":1,\"tid\":2,\"ts\":24,\"args\":{\"reads\":[\"b\"]}},\n"
	"{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":25},\n"
	"{\"ph\":\"i\",\"name\":\"inst\",\"pid\":1,\"tid\":1,\"ts\":30,\"args\":{\"signals\":[\"t\"]}},\n"
	"{\"ph\":\"X\",\"name\":\"dup\",\"pid\":1,\"tid\":1,\"ts\":40,\"dur\":1,\"args\":{\"reads\":[\"a\"]},\"args\":{\"k\":1}},\n"
	"{\"ph\":\"X\",\"name\":\"dup2\",\"pid\":1,\"tid\":1,\"ts\":42,\"dur\":1,\"args\":{\"k\":1},\"args\":{\"reads\":[\"a\"]}},\n"
	"{\"ph\":\"X\",\"name\":\"noobj\",\"pid\":1,\"tid\":1,\"ts\":44,\"dur\":1,\"args\":[\"reads\"]},\n"
	"{\"ph\":\"b\",\"name\":\"as\",\"cat\":\"c\",\"id\":1,\"pid\":1,\"ts\":50,\"args\":{\"waits\":[\"s>=1\"]}},\n"
	"{\"ph\":\"e\",\"name\":\"as\",\"cat\":\"c\",\"id\":1,\"pid\":1,\"ts\":51},\n"
	"{\"ph\":\"X\",\"name\":\"last\",\"pid\":1,\"tid\":1,\"ts\":60,\"dur\":1,\"args\":{ \"a\" : 1 , \"writes\" : [\"c\"] }}\n"
	"]";

static void
test_access_flags(void)
{
	struct e2e x;

	if (e2e_run(&x, access_doc, sizeof(access_doc) - 1)) {
		ok(0, "access-set trace: %s", x.err.msg);
		e2e_close(&x);
		return;
	}
	IS_Q(x.db, "SELECT group_concat(n || '=' || f, ' ') FROM (SELECT s.s n, e.flags & 1 f "
	     "FROM events e JOIN strings s ON s.id = e.name ORDER BY e.ts)",
	     "r=1 w=1 sig=1 wait=1 ops=1 nested=0 value=0 esc=1 escnot=0 be=1 be2=0 be3=1 inst=1 "
	     "dup=0 dup2=1 noobj=0 as=1 last=1",
	     "flags: a top-level access-set key of the stored args (escapes decoded), "
	     "not a nested key or a value");
	e2e_close(&x);
}

/* Everything a reader stored, as text: stats, events, edges, units, devices, meta. */
static void
e2e_dump(struct e2e *x, int ret, struct tc_buf *out)
{
	static const char *const sql[] = {
		"SELECT id, unit, kind, ts, dur, depth, name, cat, value, seq, flags, args "
		"FROM events ORDER BY id",
		"SELECT src, dst, kind, label FROM edges ORDER BY src, dst, kind, label",
		"SELECT * FROM units ORDER BY id",
		"SELECT * FROM devices ORDER BY id",
		"SELECT * FROM strings ORDER BY id",
		"SELECT * FROM meta ORDER BY key",
	};
	sqlite3_stmt *s;
	char *stats;
	size_t i;
	int c;

	tc_buf_printf(out, "ret %d: %s\n", ret, x->err.msg);
	if (ret)
		return;
	stats = st_stats_to_json_text(&x->st);
	tc_buf_printf(out, "%s\n", stats);
	free(stats);
	for (i = 0; i < TC_ARRAY_SIZE(sql); i++) {
		if (sqlite3_prepare_v2(x->db, sql[i], -1, &s, NULL) != SQLITE_OK) {
			tc_buf_printf(out, "sql error: %s\n", sqlite3_errmsg(x->db));
			continue;
		}
		while (sqlite3_step(s) == SQLITE_ROW) {
			for (c = 0; c < sqlite3_column_count(s); c++)
				tc_buf_printf(out, "%s|", sqlite3_column_text(s, c) ?
					      (const char *)sqlite3_column_text(s, c) : "NULL");
			tc_buf_addc(out, '\n');
		}
		sqlite3_finalize(s);
	}
}

/*
 * The reader parses an event in place when it lies inside one read chunk and
 * goes through the scanner's copy when it crosses one, and big inputs are
 * read on a second thread: the stored trace, the counts and every error
 * message must not depend on where the chunks fall or who read them.
 */
static void
test_chunk_sizes(void)
{
	static const size_t chunks[] = { 1, 2, 3, 5, 8, 13, 64, 333, 4096 };
	static const struct { const char *doc, *name; } docs[] = {
		{ e2e_doc, "the end-to-end trace" },
		{ access_doc, "the access-set trace" },
		{ "[{\"ph\":\"X\",\"ts\":1,\"dur\":1},{\"ph\":\"X\",\"ts\":1 \"dur\":1}]",
		  "a syntax error in an event" },
		{ "[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"args\":{\"a\":[1,}}}]",
		  "a syntax error in args" },
		{ "[{\"ph\":\"X\",\"ts\":1,\"dur\":1},{\"ph\":\"X\",\"ts\":2,\"dur\":1}}]",
		  "an extra '}'" },
		{ "[{\"ph\":\"X\",\"ts\":1,\"dur\":1},[1,2,}]", "a bad non-object element" },
		{ "{\"traceEvents\":[{\"ph\":\"i\",\"ts\":1,\"name\":\"a\\\"b\\\\\"},"
		  "{\"ph\":\"i\",\"ts\":2,\"args\":{\"k\":\"\\u00e9\\ud83d\\ude00\"}}  ,  ]  }",
		  "escapes, white space, a trailing comma" },
		{ "[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"name\":\"x\"},{\"ph\":\"X\",\"ts\":2",
		  "cut inside the last event" },
	};
	struct tc_buf whole, part;
	struct e2e x;
	size_t d, c;
	int ret;

	tc_buf_init(&whole);
	tc_buf_init(&part);
	for (d = 0; d < TC_ARRAY_SIZE(docs); d++) {
		size_t len = strlen(docs[d].doc), bad = 0;

		tc_buf_reset(&whole);
		ret = e2e_run_opts(&x, docs[d].doc, len, NULL, len + 1, 0);
		e2e_dump(&x, ret, &whole);
		e2e_close(&x);
		for (c = 0; c < 2 * TC_ARRAY_SIZE(chunks); c++) {
			size_t chunk = chunks[c / 2];
			int thread = c % 2;

			tc_buf_reset(&part);
			ret = e2e_run_opts(&x, docs[d].doc, len, NULL, chunk, thread);
			e2e_dump(&x, ret, &part);
			e2e_close(&x);
			if (part.len != whole.len || memcmp(part.data, whole.data, part.len)) {
				printf("# %zu-byte chunks%s:\n# %s\n# whole:\n# %s\n", chunk,
				       thread ? " read on a thread" : "", part.data, whole.data);
				bad++;
			}
		}
		ok(!bad, "%s: the same store and messages at every chunk size, read inline or "
		   "on a thread", docs[d].name);
	}
	tc_buf_free(&whole);
	tc_buf_free(&part);
}

/* @doc gzip'd into @out. */
static void
gzip_doc(const char *doc, size_t len, struct tc_buf *out)
{
	z_stream z;
	unsigned char buf[4096];

	memset(&z, 0, sizeof(z));
	deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (unsigned char *)(uintptr_t)doc;
	z.avail_in = (uInt)len;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		deflate(&z, Z_FINISH);
		tc_buf_add(out, (const char *)buf, sizeof(buf) - z.avail_out);
	} while (z.avail_out == 0);
	deflateEnd(&z);
}

/* A gzip'd trace, whole and cut short: inflated inline or on the read-ahead thread. */
static void
test_gzip_thread(void)
{
	static const size_t chunks[] = { 1, 7, 4096 };
	struct tc_buf gz, whole, part;
	struct e2e x;
	size_t c, cut;
	int ret, bad;

	tc_buf_init(&gz);
	tc_buf_init(&whole);
	tc_buf_init(&part);
	gzip_doc(e2e_doc, sizeof(e2e_doc) - 1, &gz);
	for (cut = 0; cut < 2; cut++) {
		size_t len = cut ? gz.len * 2 / 3 : gz.len;

		bad = 0;
		tc_buf_reset(&whole);
		ret = e2e_run_opts(&x, gz.data, len, NULL, 0, 0);
		e2e_dump(&x, ret, &whole);
		e2e_close(&x);
		for (c = 0; c < TC_ARRAY_SIZE(chunks); c++) {
			tc_buf_reset(&part);
			ret = e2e_run_opts(&x, gz.data, len, NULL, chunks[c], 1);
			e2e_dump(&x, ret, &part);
			e2e_close(&x);
			if (part.len != whole.len || memcmp(part.data, whole.data, part.len)) {
				printf("# %zu-byte chunks on a thread:\n# %s\n# inline:\n# %s\n",
				       chunks[c], part.data, whole.data);
				bad++;
			}
		}
		if (cut)
			ok(!bad && strstr(whole.data, "truncated gzip"),
			   "a cut gzip stream fails the same way read on a thread");
		else
			ok(!bad && !strncmp(whole.data, "ret 0:", 6),
			   "a gzip'd trace reads the same on a thread");
	}
	tc_buf_free(&gz);
	tc_buf_free(&whole);
	tc_buf_free(&part);
}

static void
e2e_fails(const char *doc, const char *want, const char *name)
{
	struct e2e x;
	int ret = e2e_run(&x, doc, strlen(doc));

	ok(ret < 0 && strstr(x.err.msg, want) && strstr(x.err.msg, "e2e.json"), "%s", name);
	if (!(ret < 0 && strstr(x.err.msg, want)))
		printf("#   ret %d, message \"%s\", want \"%s\"\n", ret, x.err.msg, want);
	e2e_close(&x);
	ok(access(x.path, F_OK) != 0, "%s: no file left", name);
}

static void
test_e2e_errors(void)
{
	e2e_fails("[]", "not a trace: no timed events", "empty event array");
	e2e_fails("{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,"
		  "\"args\":{\"name\":\"x\"}}]}", "no timed events", "metadata only");
	e2e_fails("[{\"ts\":1},{\"ph\":\"X\"}]", "all 2 events are bad; first: event 0 at "
		  "byte 1: missing ph", "all events bad");
	e2e_fails("[{\"ph\":\"X\",\"ts\":1,\"dur\":1},{\"ph\":\"X\",\"ts\":1 \"dur\":1}]",
		  "byte 44: invalid JSON in event 1: expected ',' or '}'", "syntax error in an event");
	e2e_fails("{\"traceEvents\":[{\"ph\":\"i\",\"ts\":1}],\"x\":[1,}",
		  "invalid JSON in top-level \"x\"", "syntax error in metadata");
	e2e_fails("[{\"ph\":\"X\",\"ts\":1,\"dur\":1},[1,2,}]", "invalid JSON in event 1",
		  "syntax error in a non-object element");
}

static void
test_bigdoc_chunks(void)
{
	/* Events bigger than the 1 MiB read chunk cross chunk boundaries. */
	struct tc_buf b;
	struct e2e x;
	int i;

	tc_buf_init(&b);
	tc_buf_adds(&b, "[");
	for (i = 0; i < 5; i++) {
		tc_buf_printf(&b, "%s{\"ph\":\"X\",\"name\":\"big%d\",\"pid\":1,\"tid\":1,\"ts\":%d,"
			      "\"dur\":1,\"args\":{\"blob\":\"", i ? "," : "", i, i * 10);
		for (int k = 0; k < 300000; k++)
			tc_buf_adds(&b, "ab\\\"");
		tc_buf_adds(&b, "\"}}");
	}
	tc_buf_adds(&b, "]");
	if (e2e_run(&x, b.data, b.len)) {
		ok(0, "5 events of 1.2 MB: %s", x.err.msg);
	} else {
		is_int(x.st.slices, 5, "5 events of 1.2 MB each ingest across chunk boundaries");
		is_int(q1(x.db, "SELECT length(args) FROM events LIMIT 1"), 1200000 + 11,
		       "big args kept whole");
	}
	e2e_close(&x);
	tc_buf_free(&b);
}

static void
test_async_ids(void)
{
	static const char doc[] = "["
		/* id2 local and global with the same value are different ids */
		"{\"ph\":\"b\",\"cat\":\"c\",\"name\":\"L\",\"id2\":{\"local\":\"0x1\"},\"pid\":1,\"ts\":1},"
		"{\"ph\":\"b\",\"cat\":\"c\",\"name\":\"G\",\"id2\":{\"global\":\"0x1\"},\"pid\":1,\"ts\":2},"
		"{\"ph\":\"e\",\"cat\":\"c\",\"name\":\"L\",\"id2\":{\"local\":\"0x1\"},\"pid\":1,\"ts\":5},"
		"{\"ph\":\"e\",\"cat\":\"c\",\"name\":\"G\",\"id2\":{\"global\":\"0x1\"},\"pid\":1,\"ts\":9},"
		/* nested b/e on one id: e closes the same name */
		"{\"ph\":\"b\",\"cat\":\"n\",\"name\":\"outer\",\"id\":7,\"pid\":1,\"ts\":10},"
		"{\"ph\":\"b\",\"cat\":\"n\",\"name\":\"inner\",\"id\":7,\"pid\":1,\"ts\":11},"
		"{\"ph\":\"e\",\"cat\":\"n\",\"name\":\"outer\",\"id\":7,\"pid\":1,\"ts\":20},"
		"{\"ph\":\"e\",\"cat\":\"n\",\"name\":\"inner\",\"id\":7,\"pid\":1,\"ts\":15},"
		/* a different scope is a different id */
		"{\"ph\":\"b\",\"cat\":\"n\",\"name\":\"sc\",\"id\":8,\"scope\":\"a\",\"pid\":1,\"ts\":30},"
		"{\"ph\":\"e\",\"cat\":\"n\",\"name\":\"sc\",\"id\":8,\"scope\":\"b\",\"pid\":1,\"ts\":31},"
		/* deprecated S/T/F */
		"{\"ph\":\"S\",\"cat\":\"d\",\"name\":\"old\",\"id\":\"0x2\",\"pid\":1,\"ts\":40},"
		"{\"ph\":\"T\",\"cat\":\"d\",\"name\":\"old\",\"id\":\"0x2\",\"pid\":1,\"ts\":41},"
		"{\"ph\":\"F\",\"cat\":\"d\",\"name\":\"old\",\"id\":\"0x2\",\"pid\":1,\"ts\":44}]";
	struct e2e x;

	if (e2e_run(&x, doc, sizeof(doc) - 1)) {
		ok(0, "async ingest: %s", x.err.msg);
		e2e_close(&x);
		return;
	}
	IS_Q(x.db, "SELECT group_concat(n || '=' || d, ' ') FROM (SELECT s.s n, e.dur / 1000 d "
	     "FROM events e JOIN strings s ON s.id = e.name ORDER BY s.s)",
	     "G=7 L=4 inner=4 old=4 outer=10 sc=14", "async slices by id2, name, scope and S/F");
	/* sc: scope b's e finds nothing (unmatched); scope a's b closes at the trace end (44) */
	is_int(x.st.unmatched, 2, "mismatched scope: one unmatched e, one b closed at the end");
	IS_Q(x.db, "SELECT count(*) FROM units WHERE kind = 4", "6",
	     "one async unit per (process, cat, name)");
	e2e_close(&x);
}

/*
 * The threads of an accelerator are its streams whichever rule found it: a
 * label such as "MTIA 17", or mtia_* categories on a small integer pid; on a
 * large pid those categories make neither.
 */
static void
test_accel_streams(void)
{
	static const char doc[] = "["
		"{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":5,\"args\":{\"labels\":\"MTIA 17\"}},"
		"{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":5,\"tid\":3},"
		"{\"ph\":\"X\",\"name\":\"b\",\"ts\":1,\"dur\":2,\"pid\":6,\"tid\":3,"
		"\"cat\":\"mtia_kernel\"},"
		"{\"ph\":\"X\",\"name\":\"c\",\"ts\":1,\"dur\":2,\"pid\":5000,\"tid\":3,"
		"\"cat\":\"mtia_kernel\"}]";
	struct e2e x;

	if (e2e_run(&x, doc, sizeof(doc) - 1)) {
		ok(0, "accelerator ingest: %s", x.err.msg);
		e2e_close(&x);
		return;
	}
	IS_Q(x.db, "SELECT group_concat(n, ' ') FROM (SELECT s.s || ':' || d.kind || '/' || "
	     "u.kind n FROM events e JOIN strings s ON s.id = e.name JOIN units u ON u.id = e.unit "
	     "JOIN devices d ON d.id = u.device_id ORDER BY s.s)",
	     "a:3/2 b:3/2 c:0/3",
	     "accelerator by label or by category: its threads are streams; a large pid: neither");
	e2e_close(&x);
}

static void
test_offset(void)
{
	static const char doc[] = "[{\"ph\":\"X\",\"ts\":1.5,\"dur\":1,\"pid\":1,\"tid\":1},"
		"{\"ph\":\"s\",\"id\":1,\"ts\":1.5,\"pid\":1,\"tid\":1},"
		"{\"ph\":\"f\",\"id\":1,\"ts\":3,\"pid\":1,\"tid\":1},"
		"{\"ph\":\"X\",\"ts\":3,\"dur\":1,\"pid\":1,\"tid\":1}]";
	struct ing_opts o = { .ts_offset_ns = -1000 };
	struct e2e x;

	if (e2e_run_opts(&x, doc, sizeof(doc) - 1, &o, 0, -1)) {
		ok(0, "ts_offset_ns ingest: %s", x.err.msg);
	} else {
		is_int(q1(x.db, "SELECT min(ts) FROM events"), 500, "ts_offset_ns shifts stored ts");
		is_int(x.st.edges[ST_EDGE_FLOW], 1, "flows still bind under an offset");
	}
	e2e_close(&x);
}

struct prog {
	int calls;
	double last;
	int backwards;
};

static int
on_progress(void *ctx, double frac)
{
	struct prog *p = ctx;

	if (frac < p->last || frac > 1.0)
		p->backwards++;
	p->last = frac;
	p->calls++;
	return 0;
}

static void
test_progress(void)
{
	char path[256], db[300];
	struct st_writer *w = NULL;
	struct tc_input *in = NULL;
	struct tc_err err = { 0 };
	struct prog p = { 0 };
	struct ing_opts o = { .progress = on_progress, .ctx = &p };
	FILE *f;
	int i, ret;

	snprintf(path, sizeof(path), "%s/test-json-prog-%d.json",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	f = fopen(path, "w");
	fputs("[", f);
	for (i = 0; i < 40000; i++)	/* about 3.5 MB: several 1 MiB chunks */
		fprintf(f, "%s{\"ph\":\"X\",\"name\":\"n%d\",\"pid\":1,\"tid\":1,\"ts\":%d,"
			"\"dur\":1,\"args\":{\"pad\":\"%040d\"}}", i ? ",\n" : "", i % 7, i * 2, i);
	fputs("]", f);
	fclose(f);
	snprintf(db, sizeof(db), "%s.db", path);
	ret = st_writer_open(&w, db, &err);
	if (!ret)
		ret = tc_input_open(&in, path, &err);
	if (!ret)
		ret = ing_json_read(w, in, &o, &err);
	is_int(ret, 0, "3.5 MB file ingests");
	ok(p.calls >= 4, "progress called per chunk (%d calls)", p.calls);
	is_int(p.backwards, 0, "progress never goes backwards or past 1");
	ok(p.last == 1.0, "progress ends at 1.0 (%g)", p.last);
	tc_input_close(in);
	st_writer_abort(w);
	unlink(path);
}

int
main(void)
{
	test_numbers();
	test_values();
	test_scanner();
	test_scanner_errors();
	test_e2e();
	test_access_flags();
	test_chunk_sizes();
	test_gzip_thread();
	test_e2e_errors();
	test_bigdoc_chunks();
	test_async_ids();
	test_accel_streams();
	test_offset();
	test_progress();
	return tap_done();
}
