/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-perfetto.c - the Perfetto reader end to end on a trace
 * built here with the generated protobuf-c code (so a fresh clone without
 * ../shared covers it): track descriptors, interning, an incremental clock
 * in microseconds, nested slices, counters, flows, debug annotations,
 * compressed_packets, unknown fields and extensions, skipped packets; then
 * bad inputs and their messages; then the exporter's round trip.
 *
 * With NX_WRITE_FIXTURE=PATH it also writes the trace to PATH (that is how
 * tests/data/perfetto/small.pftrace was made).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include <zlib.h>
#include "tests/tap.h"
#include "store/library.h"
#include "ingest/ingest.h"
#include "ingest/perfetto-int.h"

typedef Perfetto__Protos__TracePacket Pkt;
typedef Perfetto__Protos__TrackEvent Ev;

static char tmpdir[256];

/* ---- building traces ---- */

static void
frame(struct tc_buf *b, const uint8_t *data, size_t len)
{
	uint8_t hdr[11];
	size_t n;

	hdr[0] = 0x0a;
	n = 1 + pf_put_varint(hdr + 1, len);
	tc_buf_add(b, hdr, n);
	tc_buf_add(b, data, len);
}

/* Append @p, plus @extra raw bytes inside the packet (unknown fields). */
static void
put(struct tc_buf *b, Pkt *p, const uint8_t *extra, size_t extra_len)
{
	size_t len = perfetto__protos__trace_packet__get_packed_size(p);
	uint8_t *buf = malloc(len + extra_len);

	perfetto__protos__trace_packet__pack(p, buf);
	if (extra_len)
		memcpy(buf + len, extra, extra_len);
	frame(b, buf, len + extra_len);
	free(buf);
}

static Pkt
pkt(uint32_t seq)
{
	Pkt p = PERFETTO__PROTOS__TRACE_PACKET__INIT;

	p.has_trusted_packet_sequence_id = 1;
	p.trusted_packet_sequence_id = seq;
	return p;
}

static void
build_trace(struct tc_buf *b)
{
	Pkt p;
	Ev te;
	Perfetto__Protos__ClockSnapshot cs = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Perfetto__Protos__ClockSnapshot__Clock c0 = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT;
	Perfetto__Protos__ClockSnapshot__Clock c1 = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT;
	Perfetto__Protos__ClockSnapshot__Clock *clocks[2] = { &c0, &c1 };
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor thd = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
	Perfetto__Protos__TracePacketDefaults def = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
	Perfetto__Protos__TrackEventDefaults ted = PERFETTO__PROTOS__TRACK_EVENT_DEFAULTS__INIT;
	Perfetto__Protos__InternedData id = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	Perfetto__Protos__EventName n1 = PERFETTO__PROTOS__EVENT_NAME__INIT;
	Perfetto__Protos__EventName n2 = PERFETTO__PROTOS__EVENT_NAME__INIT;
	Perfetto__Protos__EventName *names[2] = { &n1, &n2 };
	Perfetto__Protos__EventCategory k1 = PERFETTO__PROTOS__EVENT_CATEGORY__INIT;
	Perfetto__Protos__EventCategory *cats[1] = { &k1 };
	Perfetto__Protos__DebugAnnotationName a1 = PERFETTO__PROTOS__DEBUG_ANNOTATION_NAME__INIT;
	Perfetto__Protos__DebugAnnotationName *anames[1] = { &a1 };
	Perfetto__Protos__DebugAnnotation da = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	Perfetto__Protos__DebugAnnotation db2 = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	Perfetto__Protos__DebugAnnotation *annots[2] = { &da, &db2 };
	uint64_t cat_iids[1] = { 1 }, flow[1] = { 77 };
	/* unknown TracePacket field 1 (ftrace_events) and a TrackEvent extension 1000 */
	static const uint8_t ftrace[] = { 0x0a, 0x02, 0x08, 0x01 };
	static const uint8_t ext[] = { 0x5a, 0x03, 0xc0, 0x3e, 0x01 };
	struct tc_buf inner;
	uLongf zlen;
	uint8_t *z;

	/* seq 1: clear, clock 64 = µs deltas; BOOTTIME 5 s == clock 64 at 1 s */
	p = pkt(1);
	p.has_sequence_flags = 1;
	p.sequence_flags = 1;
	c0.has_clock_id = 1;
	c0.clock_id = 6;
	c0.has_timestamp = 1;
	c0.timestamp = 5000000000ULL;
	c1.has_clock_id = 1;
	c1.clock_id = 64;
	c1.has_timestamp = 1;
	c1.timestamp = 1000000;
	c1.has_is_incremental = 1;
	c1.is_incremental = 1;
	c1.has_unit_multiplier_ns = 1;
	c1.unit_multiplier_ns = 1000;
	cs.n_clocks = 2;
	cs.clocks = clocks;
	p.clock_snapshot = &cs;
	put(b, &p, NULL, 0);

	/* descriptors: process 42 "proc", thread 7 "main", counter "bytes" */
	p = pkt(1);
	td.has_uuid = 1;
	td.uuid = 1;
	pd.has_pid = 1;
	pd.pid = 42;
	pd.process_name = "proc";
	td.process = &pd;
	p.track_descriptor = &td;
	put(b, &p, ftrace, sizeof(ftrace));

	p = pkt(1);
	td = (Perfetto__Protos__TrackDescriptor)PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	td.has_uuid = 1;
	td.uuid = 10;
	td.has_parent_uuid = 1;
	td.parent_uuid = 1;
	thd.has_pid = 1;
	thd.pid = 42;
	thd.has_tid = 1;
	thd.tid = 7;
	thd.thread_name = "main";
	td.thread = &thd;
	p.track_descriptor = &td;
	put(b, &p, NULL, 0);

	p = pkt(1);
	td = (Perfetto__Protos__TrackDescriptor)PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	td.has_uuid = 1;
	td.uuid = 20;
	td.has_parent_uuid = 1;
	td.parent_uuid = 1;
	td.name = "bytes";
	cd.has_unit = 1;
	cd.unit = 3;
	td.counter = &cd;
	p.track_descriptor = &td;
	put(b, &p, NULL, 0);

	/* defaults + interning + BEGIN "outer" at +10 µs with a flow and args */
	p = pkt(1);
	ted.has_track_uuid = 1;
	ted.track_uuid = 10;
	def.has_timestamp_clock_id = 1;
	def.timestamp_clock_id = 64;
	def.track_event_defaults = &ted;
	p.trace_packet_defaults = &def;
	n1.has_iid = 1;
	n1.iid = 1;
	n1.name = "outer";
	n2.has_iid = 1;
	n2.iid = 2;
	n2.name = "inner";
	k1.has_iid = 1;
	k1.iid = 1;
	k1.name = "cat";
	a1.has_iid = 1;
	a1.iid = 1;
	a1.name = "size";
	id.n_event_names = 2;
	id.event_names = names;
	id.n_event_categories = 1;
	id.event_categories = cats;
	id.n_debug_annotation_names = 1;
	id.debug_annotation_names = anames;
	p.interned_data = &id;
	p.has_sequence_flags = 1;
	p.sequence_flags = 2;
	p.has_timestamp = 1;
	p.timestamp = 10;
	te = (Ev)PERFETTO__PROTOS__TRACK_EVENT__INIT;
	te.has_type = 1;
	te.type = 1;
	te.has_name_iid = 1;
	te.name_iid = 1;
	te.n_category_iids = 1;
	te.category_iids = cat_iids;
	da.has_name_iid = 1;
	da.name_iid = 1;
	da.has_int_value = 1;
	da.int_value = 5;
	db2.name = "label";
	db2.string_value = "hi \"there\"";
	te.n_debug_annotations = 2;
	te.debug_annotations = annots;
	te.n_flow_ids = 1;
	te.flow_ids = flow;
	p.track_event = &te;
	put(b, &p, ext, sizeof(ext));

	/* BEGIN inner +5, END +20, END +5 */
	p = pkt(1);
	p.has_sequence_flags = 1;
	p.sequence_flags = 2;
	p.has_timestamp = 1;
	p.timestamp = 5;
	te = (Ev)PERFETTO__PROTOS__TRACK_EVENT__INIT;
	te.has_type = 1;
	te.type = 1;
	te.has_name_iid = 1;
	te.name_iid = 2;
	p.track_event = &te;
	put(b, &p, NULL, 0);
	p.timestamp = 20;
	te = (Ev)PERFETTO__PROTOS__TRACK_EVENT__INIT;
	te.has_type = 1;
	te.type = 2;
	p.track_event = &te;
	put(b, &p, NULL, 0);
	p.timestamp = 5;
	put(b, &p, NULL, 0);

	/* COUNTER on "bytes" +1, INSTANT "ping" +1 ending flow 77 */
	p = pkt(1);
	p.has_timestamp = 1;
	p.timestamp = 1;
	te = (Ev)PERFETTO__PROTOS__TRACK_EVENT__INIT;
	te.has_type = 1;
	te.type = 4;
	te.has_track_uuid = 1;
	te.track_uuid = 20;
	te.has_counter_value = 1;
	te.counter_value = 100;
	p.track_event = &te;
	put(b, &p, NULL, 0);
	te = (Ev)PERFETTO__PROTOS__TRACK_EVENT__INIT;
	te.has_type = 1;
	te.type = 3;
	te.name = "ping";
	te.n_terminating_flow_ids = 1;
	te.terminating_flow_ids = flow;
	p.track_event = &te;
	put(b, &p, NULL, 0);

	/* compressed_packets holding one instant on seq 2 (BOOTTIME, absolute) */
	tc_buf_init(&inner);
	p = pkt(2);
	p.has_timestamp = 1;
	p.timestamp = 5000100000ULL;
	te = (Ev)PERFETTO__PROTOS__TRACK_EVENT__INIT;
	te.has_type = 1;
	te.type = 3;
	te.name = "zipped";
	te.has_track_uuid = 1;
	te.track_uuid = 10;
	p.track_event = &te;
	put(&inner, &p, NULL, 0);
	zlen = compressBound(inner.len);
	z = malloc(zlen);
	compress(z, &zlen, (const Bytef *)inner.data, inner.len);
	p = pkt(2);
	p.has_compressed_packets = 1;
	p.compressed_packets.data = z;
	p.compressed_packets.len = zlen;
	put(b, &p, NULL, 0);
	free(z);
	tc_buf_free(&inner);

	/* seq 3 needs incremental state it never got: skipped */
	p = pkt(3);
	p.has_sequence_flags = 1;
	p.sequence_flags = 2;
	p.has_timestamp = 1;
	p.timestamp = 5000200000ULL;
	te = (Ev)PERFETTO__PROTOS__TRACK_EVENT__INIT;
	te.has_type = 1;
	te.type = 3;
	te.name = "skipped";
	p.track_event = &te;
	put(b, &p, NULL, 0);
}

/* ---- reading into a real store ---- */

static int
ingest_mem(const void *data, size_t len, const char *db_path, struct st_stats *st,
	   struct tc_err *err)
{
	struct st_writer *w = NULL;
	struct tc_input *in = NULL;
	int rc;

	rc = st_writer_open(&w, db_path, err);
	if (rc < 0)
		return rc;
	rc = tc_input_open_mem(&in, data, len, "mem.pftrace", err);
	if (rc == 0)
		rc = ing_perfetto_read(w, in, NULL, err);
	tc_input_close(in);
	if (rc < 0) {
		st_writer_abort(w);
		return rc;
	}
	return st_writer_finish(w, st, err);
}

static char *
q(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	struct tc_buf b;

	tc_buf_init(&b);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		tc_buf_printf(&b, "SQL error: %s", sqlite3_errmsg(db));
		return tc_buf_steal(&b);
	}
	while (sqlite3_step(s) == SQLITE_ROW) {
		int i;

		if (b.len)
			tc_buf_addc(&b, ';');
		for (i = 0; i < sqlite3_column_count(s); i++) {
			const unsigned char *t = sqlite3_column_text(s, i);

			tc_buf_printf(&b, "%s%s", i ? "|" : "", t ? (const char *)t : "NULL");
		}
	}
	sqlite3_finalize(s);
	if (!b.data)
		return tc_xstrdup("");
	return tc_buf_steal(&b);
}

#define is_q(db, sql, want, name) do { \
	char *g__ = q(db, sql); \
	is_str(g__, want, name); \
	free(g__); \
} while (0)

static void
check_store(const char *path, const char *what)
{
	sqlite3 *db = NULL;
	char name[128];

	if (st_trace_open(&db, path, NULL) < 0) {
		ok(0, "%s: open store", what);
		return;
	}
#define N(s) (snprintf(name, sizeof(name), "%s: %s", what, s), name)
	is_q(db, "SELECT e.ts, e.dur, e.depth, s.s, c.s FROM events e JOIN strings s ON s.id = e.name "
	     "LEFT JOIN strings c ON c.id = e.cat WHERE e.kind = 0 ORDER BY e.ts",
	     "5000010000|30000|0|outer|cat;5000015000|20000|1|inner|NULL",
	     N("nested slices on the µs incremental clock, interned names"));
	is_q(db, "SELECT u.name, u.kind, d.name FROM events e JOIN units u ON u.id = e.unit "
	     "JOIN devices d ON d.id = u.device_id JOIN strings s ON s.id = e.name "
	     "WHERE s.s = 'outer'", "main|3|proc", N("thread unit under its process device"));
	is_q(db, "SELECT e.ts, e.value, u.name, u.kind FROM events e JOIN units u ON u.id = e.unit "
	     "WHERE e.kind = 2", "5000041000|100.0|bytes|5", N("counter on its counter unit"));
	is_q(db, "SELECT e.ts, s.s FROM events e JOIN strings s ON s.id = e.name WHERE e.kind = 1 "
	     "ORDER BY e.ts", "5000042000|ping;5000100000|zipped",
	     N("instants, compressed_packets inflated, needs-state packet skipped"));
	is_q(db, "SELECT a.s, b.s, x.kind FROM edges x JOIN events ea ON ea.id = x.src "
	     "JOIN events eb ON eb.id = x.dst JOIN strings a ON a.id = ea.name "
	     "JOIN strings b ON b.id = eb.name", "outer|ping|0", N("flow edge outer -> ping"));
	is_q(db, "SELECT json_extract(args, '$.size'), json_extract(args, '$.label') FROM events "
	     "WHERE name = (SELECT id FROM strings WHERE s = 'outer')", "5|hi \"there\"",
	     N("debug annotations kept as args"));
#undef N
	sqlite3_close(db);
}

static void
test_small_trace(const struct tc_buf *b)
{
	struct tc_err err = { 0 };
	struct st_stats st;
	char path[300];
	int rc;
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/small.db", tmpdir);
	rc = ingest_mem(b->data, b->len, path, &st, &err);
	if (!ok(rc == 0, "hand-built trace ingests"))
		printf("#   %s\n", err.msg);
	is_int(st.slices, 2, "2 slices");
	is_int(st.instants, 2, "2 instants");
	is_int(st.counters, 1, "1 counter");
	is_int(st.edges[ST_EDGE_FLOW], 1, "1 flow");
	is_int(st.bad_events, 0, "no bad events");
	check_store(path, "read");
	if (sqlite3_open(path, &db) == SQLITE_OK) {
		is_q(db, "SELECT json_extract(value, '$.skipped_needs_state'), "
		     "json_extract(value, '$.compressed_blocks') FROM meta WHERE key = 'perfetto_stats'",
		     "1|1", "perfetto_stats counts the skipped packet and the compressed block");
		sqlite3_close(db);
	}

	/* round trip: store -> .pftrace -> store gives the same events */
	{
		char out[300], path2[300];
		FILE *f;
		struct tc_buf rt;
		char chunk[4096];
		size_t n;

		snprintf(out, sizeof(out), "%s/rt.pftrace", tmpdir);
		snprintf(path2, sizeof(path2), "%s/rt.db", tmpdir);
		db = NULL;
		st_trace_open(&db, path, NULL);
		f = fopen(out, "wb");
		rc = pf_export_pftrace(db, f, out, &err);
		fclose(f);
		sqlite3_close(db);
		if (!ok(rc == 0, "export to .pftrace"))
			printf("#   %s\n", err.msg);
		tc_buf_init(&rt);
		f = fopen(out, "rb");
		while (f && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			tc_buf_add(&rt, chunk, n);
		if (f)
			fclose(f);
		rc = ingest_mem(rt.data, rt.len, path2, &st, &err);
		if (!ok(rc == 0, "exported trace ingests back"))
			printf("#   %s\n", err.msg);
		is_int(st.slices, 2, "round trip: 2 slices");
		is_int(st.instants, 2, "round trip: 2 instants");
		is_int(st.counters, 1, "round trip: 1 counter");
		is_int(st.edges[ST_EDGE_FLOW], 1, "round trip: 1 flow");
		check_store(path2, "round trip");
		tc_buf_free(&rt);
	}
}

static void
test_bad_input(const struct tc_buf *good)
{
	static const struct {
		const char *name;
		const char *data;
		size_t len;
		const char *want;
	} cases[] = {
		{ "garbage", "hello world, not a trace", 24, "byte 0 is 0x68" },
		{ "truncated varint", "\x0a\xff\xff", 3, "truncated varint (packet length) at byte 0" },
		{ "bad wire type", "\x0a\x00\x0f\x01", 4, "bad field tag 0xf at byte 2" },
		{ "empty", "", 0, "empty Perfetto trace" },
		{ "huge length", "\x0a\xff\xff\xff\xff\x0f", 6, "claims" },
	};
	struct tc_err err;
	struct tc_buf b;
	char path[300], name[128];
	size_t i;
	int rc;

	snprintf(path, sizeof(path), "%s/bad.db", tmpdir);
	for (i = 0; i < TC_ARRAY_SIZE(cases); i++) {
		memset(&err, 0, sizeof(err));
		rc = ingest_mem(cases[i].data, cases[i].len, path, NULL, &err);
		snprintf(name, sizeof(name), "%s fails", cases[i].name);
		ok(rc < 0, "%s", name);
		snprintf(name, sizeof(name), "%s: message names the input and the problem",
			 cases[i].name);
		if (!ok(strstr(err.msg, "mem.pftrace") && strstr(err.msg, cases[i].want) &&
			!strchr(err.msg, '\n'), "%s", name))
			printf("#   got \"%s\"\n", err.msg);
	}
	/* a good trace cut inside its last packet */
	tc_buf_init(&b);
	tc_buf_add(&b, good->data, good->len - 3);
	memset(&err, 0, sizeof(err));
	rc = ingest_mem(b.data, b.len, path, NULL, &err);
	ok(rc < 0, "truncated trace fails");
	if (!ok(strstr(err.msg, "truncated packet at byte ") != NULL, "truncated: says where"))
		printf("#   got \"%s\"\n", err.msg);
	tc_buf_free(&b);
}

int
main(void)
{
	struct tc_buf b;
	const char *fixture = getenv("NX_WRITE_FIXTURE");

	snprintf(tmpdir, sizeof(tmpdir), "%s/test-perfetto.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir))
		tap_skip_all("cannot make a temp dir");
	tc_buf_init(&b);
	build_trace(&b);
	if (fixture) {
		FILE *f = fopen(fixture, "wb");

		ok(f && fwrite(b.data, 1, b.len, f) == b.len && !fclose(f), "fixture written");
	}
	test_small_trace(&b);
	test_bad_input(&b);
	tc_buf_free(&b);
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			tap_diag("could not remove the temp dir");
	}
	return tap_done();
}
