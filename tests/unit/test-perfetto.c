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
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include <zlib.h>
#include <jansson.h>
#include "common/tc-varint.h"
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
	n = 1 + tc_uvarint_put(hdr + 1, len);
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

/*
 * A ClockSnapshot on sequence 1 (clearing its state): BOOTTIME (6) at 5 s is
 * @clock at @ts, a unit of @mult ns, @incremental or not.
 */
static void
put_snapshot(struct tc_buf *b, uint32_t clock, uint64_t ts, uint64_t mult, bool incremental)
{
	Perfetto__Protos__ClockSnapshot cs = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Perfetto__Protos__ClockSnapshot__Clock c0 = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT;
	Perfetto__Protos__ClockSnapshot__Clock c1 = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT;
	Perfetto__Protos__ClockSnapshot__Clock *clocks[2] = { &c0, &c1 };
	Pkt p = pkt(1);

	p.has_sequence_flags = 1;
	p.sequence_flags = 1;
	c0.has_clock_id = 1;
	c0.clock_id = 6;
	c0.has_timestamp = 1;
	c0.timestamp = 5000000000ULL;
	c1.has_clock_id = 1;
	c1.clock_id = clock;
	c1.has_timestamp = 1;
	c1.timestamp = ts;
	c1.has_is_incremental = incremental;
	c1.is_incremental = incremental;
	c1.has_unit_multiplier_ns = 1;
	c1.unit_multiplier_ns = mult;
	cs.n_clocks = 2;
	cs.clocks = clocks;
	p.clock_snapshot = &cs;
	put(b, &p, NULL, 0);
}

static void
build_trace(struct tc_buf *b)
{
	Pkt p;
	Ev te;
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
	char *plabels[2] = { "gpu", "rank 0" };
	/* unknown TracePacket field 1 (ftrace_events) and a TrackEvent extension 1000 */
	static const uint8_t ftrace[] = { 0x0a, 0x02, 0x08, 0x01 };
	static const uint8_t ext[] = { 0x5a, 0x03, 0xc0, 0x3e, 0x01 };
	struct tc_buf inner;
	uLongf zlen;
	uint8_t *z;

	/* seq 1: clear, clock 64 = µs deltas; BOOTTIME 5 s == clock 64 at 1 s */
	put_snapshot(b, 64, 1000000, 1000, true);

	/* descriptors: process 42 "proc", thread 7 "main", counter "bytes" */
	p = pkt(1);
	td.has_uuid = 1;
	td.uuid = 1;
	pd.has_pid = 1;
	pd.pid = 42;
	pd.process_name = "proc";
	/* labels on a descriptor that comes before the process's first event */
	pd.n_process_labels = 2;
	pd.process_labels = plabels;
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
	is_q(db, "SELECT label FROM devices WHERE name = 'proc'", "gpu, rank 0",
	     N("process_labels of a descriptor before the first event: the device's label"));
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

/* ---- the hand decoder (ing-perfetto-dec.c) against protobuf-c ---- */

/* Whether protobuf-c messages @a and @b hold the same known fields
 * (unknown fields are not compared: the hand decoder does not keep them). */
static bool
msg_eq(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
	const ProtobufCMessageDescriptor *d = a->descriptor;
	unsigned i;

	if (a->descriptor != b->descriptor)
		return false;
	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *pa = (const char *)a + f->offset, *pb = (const char *)b + f->offset;
		size_t n = 1, k, size;

		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = *(const size_t *)((const char *)a + f->quantifier_offset);
			if (n != *(const size_t *)((const char *)b + f->quantifier_offset))
				return false;
			pa = *(const char *const *)pa;
			pb = *(const char *const *)pb;
		} else if (f->quantifier_offset &&
			   *(const protobuf_c_boolean *)((const char *)a + f->quantifier_offset) !=
			   *(const protobuf_c_boolean *)((const char *)b + f->quantifier_offset)) {
			return false;
		}
		switch (f->type) {
		case PROTOBUF_C_TYPE_STRING:
			size = sizeof(char *);
			break;
		case PROTOBUF_C_TYPE_BYTES:
			size = sizeof(ProtobufCBinaryData);
			break;
		case PROTOBUF_C_TYPE_MESSAGE:
			size = sizeof(ProtobufCMessage *);
			break;
		case PROTOBUF_C_TYPE_INT64:
		case PROTOBUF_C_TYPE_UINT64:
		case PROTOBUF_C_TYPE_SINT64:
		case PROTOBUF_C_TYPE_FIXED64:
		case PROTOBUF_C_TYPE_SFIXED64:
		case PROTOBUF_C_TYPE_DOUBLE:
			size = 8;
			break;
		default:
			size = 4;
			break;
		}
		for (k = 0; k < n; k++) {
			const void *x = pa + k * size, *y = pb + k * size;

			if (f->type == PROTOBUF_C_TYPE_STRING) {
				const char *sx = *(char *const *)x, *sy = *(char *const *)y;

				if (!sx != !sy || (sx && strcmp(sx, sy)))
					return false;
			} else if (f->type == PROTOBUF_C_TYPE_BYTES) {
				const ProtobufCBinaryData *bx = x, *by = y;

				if (bx->len != by->len || (bx->len && memcmp(bx->data, by->data, bx->len)))
					return false;
			} else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
				const ProtobufCMessage *mx = *(ProtobufCMessage *const *)x;
				const ProtobufCMessage *my = *(ProtobufCMessage *const *)y;

				if (!mx != !my || (mx && !msg_eq(mx, my)))
					return false;
			} else if (memcmp(x, y, size)) {
				return false;
			}
		}
	}
	return true;
}

struct dec_tally {
	size_t ok, slow, bad, mismatch;
};

/*
 * Decode one packet both ways.  The hand decoder must agree with
 * protobuf-c: PF_DEC_OK only where protobuf-c decodes the same values,
 * PF_DEC_BAD only where protobuf-c fails too.  Return the decoder's answer.
 */
static int
dec_vs_protobufc(struct tc_arena *a, const uint8_t *data, size_t len, struct dec_tally *t)
{
	Perfetto__Protos__TracePacket fast;
	Perfetto__Protos__TracePacket *ref;
	int rc = pf_dec_packet(a, data, len, &fast);

	ref = perfetto__protos__trace_packet__unpack(NULL, len, data);
	if (rc == PF_DEC_OK) {
		t->ok++;
		if (!ref || !msg_eq(&fast.base, &ref->base))
			t->mismatch++;
	} else if (rc == PF_DEC_BAD) {
		t->bad++;
		if (ref)
			t->mismatch++;
	} else {
		t->slow++;
	}
	perfetto__protos__trace_packet__free_unpacked(ref, NULL);
	tc_arena_reset(a);
	return rc;
}

/* A tiny protobuf writer for hand-made packets. */
static void
w_tag(struct tc_buf *b, unsigned field, unsigned wt)
{
	uint8_t v[10];

	tc_buf_add(b, v, tc_uvarint_put(v, (uint64_t)field << 3 | wt));
}

static void
w_varint(struct tc_buf *b, unsigned field, uint64_t x)
{
	uint8_t v[10];

	w_tag(b, field, 0);
	tc_buf_add(b, v, tc_uvarint_put(v, x));
}

static void
w_fixed64(struct tc_buf *b, unsigned field, uint64_t x)
{
	uint8_t v[8];
	int i;

	w_tag(b, field, 1);
	for (i = 0; i < 8; i++)
		v[i] = (uint8_t)(x >> (8 * i));
	tc_buf_add(b, v, 8);
}

static void
w_bytes(struct tc_buf *b, unsigned field, const void *p, size_t n)
{
	uint8_t v[10];

	w_tag(b, field, 2);
	tc_buf_add(b, v, tc_uvarint_put(v, n));
	tc_buf_add(b, p, n);
}

/* Every wire type as an unknown field (numbers 900-903, unused in our schema). */
static void
w_unknowns(struct tc_buf *b)
{
	static const uint8_t four[4] = { 1, 2, 3, 4 };

	w_varint(b, 900, 0xffffffffffffffffULL);
	w_fixed64(b, 901, 0x0102030405060708ULL);
	w_bytes(b, 902, "\x08\x01\xff", 3);	/* not parsed: may hold anything */
	w_tag(b, 903, 5);
	tc_buf_add(b, four, 4);
}

static void
test_decoder_cases(void)
{
	struct tc_arena a;
	struct dec_tally t = { 0 };
	struct tc_buf te, le, an, pk, x;
	Perfetto__Protos__TracePacket p;
	Perfetto__Protos__TrackEvent *e;
	uint8_t packed[64];
	size_t n;
	int rc;
	double d = -2.5;
	uint64_t dbits;

	tc_arena_init(&a, 4096);
	tc_buf_init(&te);
	tc_buf_init(&le);
	tc_buf_init(&an);
	tc_buf_init(&pk);
	tc_buf_init(&x);

	/* a debug annotation with unknown fields of every wire type */
	w_unknowns(&an);
	w_bytes(&an, 10, "k", 1);
	w_varint(&an, 4, (uint64_t)-7);		/* int64 -7: a 10-byte varint */
	/* the legacy event: negative int32 phase-like fields */
	w_varint(&le, 2, 'X');
	w_varint(&le, 3, (uint64_t)-3);
	w_varint(&le, 18, (uint64_t)(int64_t)-1);	/* pid_override int32 -1 */
	w_unknowns(&le);
	/* the TrackEvent */
	w_varint(&te, 9, 3);
	w_unknowns(&te);
	n = tc_uvarint_put(packed, 1);		/* category_iids packed [1, 300] ... */
	n += tc_uvarint_put(packed + n, 300);
	w_bytes(&te, 3, packed, n);
	w_varint(&te, 3, 7);			/* ... then one unpacked: 7 */
	w_fixed64(&te, 47, 0xfedcba9876543210ULL);	/* flow_ids: one unpacked fixed64 */
	memset(packed, 0, 16);			/* ... then two packed: 1, 2 */
	packed[0] = 1;
	packed[8] = 2;
	w_bytes(&te, 47, packed, 16);
	memcpy(&dbits, &d, 8);
	w_fixed64(&te, 46, dbits);		/* extra_double_counter_values -2.5 */
	n = tc_uvarint_put(packed, (uint64_t)-5);	/* extra_counter_values packed [-5, 6] */
	n += tc_uvarint_put(packed + n, 6);
	w_bytes(&te, 12, packed, n);
	w_varint(&te, 1, (uint64_t)-20);	/* timestamp_delta_us -20 */
	w_bytes(&te, 4, an.data, an.len);
	w_bytes(&te, 6, le.data, le.len);
	w_bytes(&te, 23, "nm", 2);
	w_bytes(&te, 2000, "\x0a\x00", 2);	/* a typed extension */
	/* the packet */
	w_varint(&pk, 10, 5);
	w_unknowns(&pk);
	w_varint(&pk, 8, 123456789012ULL);
	w_bytes(&pk, 11, te.data, te.len);
	w_varint(&pk, 13, 2);
	w_varint(&pk, 41, 0x40);		/* bools: any set bit is true ... */
	w_varint(&pk, 42, 0x80);		/* ... also past the first byte */
	w_varint(&pk, 87, 0);

	rc = pf_dec_packet(&a, (const uint8_t *)pk.data, pk.len, &p);
	is_int(rc, PF_DEC_OK, "decoder: unknown fields of every wire type are skipped");
	e = p.track_event;
	ok(e && p.has_trusted_packet_sequence_id && p.trusted_packet_sequence_id == 5 &&
	   p.has_timestamp && p.timestamp == 123456789012ULL && p.sequence_flags == 2,
	   "decoder: packet scalars");
	ok(p.has_incremental_state_cleared && p.incremental_state_cleared == 1 &&
	   p.has_previous_packet_dropped && p.previous_packet_dropped == 1 &&
	   p.has_first_packet_on_sequence && p.first_packet_on_sequence == 0, "decoder: bools");
	ok(e && e->type == 3 && e->name && !strcmp(e->name, "nm"), "decoder: type and name");
	ok(e && e->n_category_iids == 3 && e->category_iids[0] == 1 &&
	   e->category_iids[1] == 300 && e->category_iids[2] == 7,
	   "decoder: packed then unpacked repeated varints append in order");
	ok(e && e->n_flow_ids == 3 && e->flow_ids[0] == 0xfedcba9876543210ULL &&
	   e->flow_ids[1] == 1 && e->flow_ids[2] == 2, "decoder: fixed64 flow ids, both encodings");
	ok(e && e->n_extra_double_counter_values == 1 &&
	   e->extra_double_counter_values[0] == -2.5, "decoder: double element");
	ok(e && e->n_extra_counter_values == 2 && e->extra_counter_values[0] == -5 &&
	   e->extra_counter_values[1] == 6, "decoder: negative int64 in a packed run");
	ok(e && e->has_timestamp_delta_us && e->timestamp_delta_us == -20,
	   "decoder: negative int64 varint");
	ok(e && e->legacy_event && e->legacy_event->phase == 'X' &&
	   e->legacy_event->duration_us == -3 && e->legacy_event->has_pid_override &&
	   e->legacy_event->pid_override == -1, "decoder: legacy event, negative int32");
	ok(e && e->n_debug_annotations == 1 && e->debug_annotations[0]->has_int_value &&
	   e->debug_annotations[0]->int_value == -7 && e->debug_annotations[0]->name &&
	   !strcmp(e->debug_annotations[0]->name, "k"), "decoder: debug annotation");
	tc_arena_reset(&a);
	dec_vs_protobufc(&a, (const uint8_t *)pk.data, pk.len, &t);
	is_int(t.mismatch, 0, "decoder: the same packet as protobuf-c decodes it");

	/* malformed: every one must be PF_DEC_BAD, and protobuf-c must reject it too */
	{
		static const struct {
			const char *name;
			const char *data;
			size_t len;
		} bad[] = {
			{ "truncated varint", "\x40\xff\xff", 3 },
			{ "varint of 11 bytes", "\x40\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12 },
			{ "tag of 6 bytes", "\xf8\xff\xff\xff\xff\x00\x00", 7 },
			{ "length past the end", "\x5a\x05\x48\x01", 4 },
			{ "length past the end of a submessage", "\x5a\x03\xba\x01\x09", 5 },
			{ "truncated fixed64", "\x5a\x05\xf9\x02\x01\x02\x03", 7 },
			{ "packed fixed64 not a multiple of 8", "\x5a\x05\xfa\x02\x02\x01\x02", 7 },
			{ "truncated packed varint", "\x5a\x03\x1a\x01\x80", 5 },
			{ "group wire type 3", "\x0b\x0c", 2 },
			{ "wire type 7", "\x0f\x00", 2 },
			{ "fixed32 cut short", "\x0d\x01\x02", 3 },
		};
		size_t i;

		for (i = 0; i < TC_ARRAY_SIZE(bad); i++) {
			struct dec_tally tb = { 0 };

			rc = dec_vs_protobufc(&a, (const uint8_t *)bad[i].data, bad[i].len, &tb);
			if (!ok(rc == PF_DEC_BAD && !tb.mismatch, "decoder rejects: %s", bad[i].name))
				printf("#   got %d, protobuf-c disagrees: %zu\n", rc, tb.mismatch);
		}
	}
	/* left to protobuf-c */
	{
		static const struct {
			const char *name;
			const char *data;
			size_t len;
		} slow[] = {
			{ "clock snapshot", "\x32\x00", 2 },
			{ "track descriptor", "\xe2\x03\x00", 3 },
			{ "track_event given twice", "\x5a\x00\x5a\x00", 4 },
			{ "known field, other wire type", "\x41\x01\x02\x03\x04\x05\x06\x07\x08", 9 },
			{ "field number 0", "\x00\x01", 2 },
		};
		size_t i;

		for (i = 0; i < TC_ARRAY_SIZE(slow); i++) {
			struct dec_tally ts = { 0 };

			rc = dec_vs_protobufc(&a, (const uint8_t *)slow[i].data, slow[i].len, &ts);
			is_int(rc, PF_DEC_SLOW, slow[i].name);
		}
	}
	tc_buf_free(&te);
	tc_buf_free(&le);
	tc_buf_free(&an);
	tc_buf_free(&pk);
	tc_buf_free(&x);
	tc_arena_free(&a);
}

/* xorshift64*: deterministic mutations */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/*
 * ing_detect(): every cut of a real trace is still taken for Perfetto, JSON
 * by its first two tokens, and random bytes are not taken for a trace (a
 * seeded draw: the old one-byte test took about 1 in 85 of them).
 */
static void
test_detect(const struct tc_buf *good)
{
#define DETECT(what, lit, want) { what, lit, sizeof(lit) - 1, want }
	static const struct {
		const char *what;
		const char *data;
		size_t len;
		int want;
	} cases[] = {
		DETECT("an object", "{\"traceEvents\": []}", ING_FMT_JSON),
		DETECT("BOM, space, newline, array", "\xef\xbb\xbf \n[ {\"ph\": \"X\"}]",
		       ING_FMT_JSON),
		DETECT("[]", "[]", ING_FMT_JSON),
		DETECT("{ }", "{ }", ING_FMT_JSON),
		DETECT("an array cut after [", "  [  ", ING_FMT_JSON),
		DETECT("an array of numbers", "[1, 2]", ING_FMT_UNKNOWN),
		DETECT("an object without a key", "{x}", ING_FMT_UNKNOWN),
		DETECT("an array of arrays", "[[{}]]", ING_FMT_UNKNOWN),
		DETECT("text", "hello", ING_FMT_UNKNOWN),
		DETECT("one empty packet", "\x0a\x00", ING_FMT_PERFETTO),
		DETECT("a packet of one varint field", "\x0a\x02\x08\x01", ING_FMT_PERFETTO),
		DETECT("a packet field with wire type 7", "\x0a\x02\x0f\x01", ING_FMT_UNKNOWN),
		DETECT("a packet field 0", "\x0a\x02\x00\x01", ING_FMT_UNKNOWN),
		DETECT("a field longer than its packet", "\x0a\x03\x12\x05\x00", ING_FMT_UNKNOWN),
		DETECT("a top-level group", "\x0a\x00\x0b\x00", ING_FMT_UNKNOWN),
		DETECT("a top-level field other than packets", "\x0a\x00\x12\x00",
		       ING_FMT_UNKNOWN),
		DETECT("two packets", "\x0a\x00\x0a\x02\x08\x01", ING_FMT_PERFETTO),
		DETECT("a packet over the limit", "\x0a\xff\xff\xff\xff\x0f", ING_FMT_UNKNOWN),
		DETECT("a length cut by the end", "\x0a\xff", ING_FMT_PERFETTO),
	};
#undef DETECT
	unsigned char buf[3000];
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	size_t i, k, bad_cut = SIZE_MAX, hits = 0, hits0a = 0, hitsj = 0;
	const int draws = 20000;

	for (k = 2; k <= good->len; k++)
		if (ing_detect((const unsigned char *)good->data, k) != ING_FMT_PERFETTO &&
		    bad_cut == SIZE_MAX)
			bad_cut = k;
	if (!ok(bad_cut == SIZE_MAX, "detect: each of the %zu cuts of the hand-built trace is "
		"Perfetto", good->len - 1))
		printf("#   not at %zu bytes\n", bad_cut);
	for (i = 0; i < TC_ARRAY_SIZE(cases); i++) {
		char name[80];

		snprintf(name, sizeof(name), "detect: %s", cases[i].what);
		is_int(ing_detect((const unsigned char *)cases[i].data, cases[i].len), cases[i].want,
		       name);
	}
	{
		static const struct {
			const char *data, *want;
		} why[] = {
			{ "[1, 2]", "it opens like JSON, but byte 0x31 at offset 1 cannot start a "
			  "trace array (an event object or ])" },
			{ " {x", "it opens like JSON, but byte 0x78 at offset 2 cannot start a "
			  "trace object (a key or })" },
			{ "\x0a\x02\x0f\x01", "it opens like a Perfetto packet (0x0a at offset 0), "
			  "but its first 4 bytes are not well-formed protobuf packets" },
			{ "\nhello", "first byte 0x68 at offset 1" },
			{ "PK\x03\x04", "first byte 0x50 at offset 0" },
			{ "  \t", "nothing to tell from its first 3 bytes" },
		};
		char got[160];

		for (i = 0; i < TC_ARRAY_SIZE(why); i++) {
			char name[80];

			ing_detect_why((const unsigned char *)why[i].data, strlen(why[i].data), got,
				       sizeof(got));
			snprintf(name, sizeof(name), "detect: why refused, case %zu", i);
			is_str(got, why[i].want, name);
		}
	}
	for (int d = 0; d < draws; d++) {
		for (i = 0; i < sizeof(buf); i += 8) {
			uint64_t r = rnd(&s);

			memcpy(buf + i, &r, TC_MIN(8, sizeof(buf) - i));
		}
		hits += ing_detect(buf, sizeof(buf)) != ING_FMT_UNKNOWN;
		buf[0] = 0x0a;
		hits0a += ing_detect(buf, sizeof(buf)) != ING_FMT_UNKNOWN;
		buf[0] = d & 1 ? '{' : '[';
		hitsj += ing_detect(buf, sizeof(buf)) != ING_FMT_UNKNOWN;
	}
	if (!ok(hits <= (size_t)draws / 5000, "detect: %d random 3000-byte inputs, at most 1 in "
		"5000 taken for a trace", draws))
		printf("#   %zu taken\n", hits);
	if (!ok(hits0a <= (size_t)draws / 40, "detect: the same opening with 0x0a, at most 1 "
		"in 40 taken for Perfetto"))
		printf("#   %zu taken\n", hits0a);
	if (!ok(hitsj <= (size_t)draws / 100, "detect: the same opening with { or [, at most 1 in "
		"100 taken for JSON"))
		printf("#   %zu taken\n", hitsj);
	printf("# detect: random inputs taken: %zu, with 0x0a: %zu, with { or [: %zu, of %d\n",
	       hits, hits0a, hitsj, draws);
}

/*
 * Every packet of the Trace @data (plain protobuf), decoded both ways, plus
 * @mutations damaged copies of each of the first @mutate packets.
 */
static void
dec_trace(const uint8_t *data, size_t len, size_t mutate, int mutations, const char *what,
	  double want_fast)
{
	struct tc_arena a;
	struct dec_tally t = { 0 }, tm = { 0 };
	const uint8_t *p = data, *end = data + len;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	uint8_t *m = NULL;
	size_t packets = 0;

	tc_arena_init(&a, 64 << 10);
	while (p < end && *p == 0x0a) {
		uint64_t plen;
		size_t h = pf_varint(p + 1, end, &plen);
		int k;

		if (!h || plen > (uint64_t)(end - p - 1 - h))
			break;
		p += 1 + h;
		dec_vs_protobufc(&a, p, (size_t)plen, &t);
		for (k = 0; packets < mutate && k < mutations; k++) {
			size_t ml = (size_t)plen, at;

			m = realloc(m, ml + 2);
			memcpy(m, p, ml);
			at = ml ? rnd(&seed) % ml : 0;
			switch (rnd(&seed) % 5) {
			case 0:		/* flip a bit */
				if (ml)
					m[at] ^= (uint8_t)(1u << (rnd(&seed) % 8));
				break;
			case 1:		/* any byte */
				if (ml)
					m[at] = (uint8_t)rnd(&seed);
				break;
			case 2:		/* cut short */
				ml = at;
				break;
			case 3:		/* one byte more */
				memmove(m + at + 1, m + at, ml - at);
				m[at] = (uint8_t)rnd(&seed);
				ml++;
				break;
			default:	/* a continuation bit where a varint may end */
				if (ml)
					m[at] |= 0x80;
				break;
			}
			dec_vs_protobufc(&a, m, ml, &tm);
		}
		p += plen;
		packets++;
	}
	ok(p == end, "%s: %zu packets walked", what, packets);
	is_int(t.mismatch, 0, "decoder agrees with protobuf-c on every packet");
	printf("# %s: %zu fast, %zu left to protobuf-c, %zu malformed\n", what, t.ok, t.slow,
	       t.bad);
	ok(t.ok >= want_fast * (double)packets, "%s: the fast path takes >= %.0f%% of the packets",
	   what, want_fast * 100);
	if (mutations) {
		is_int(tm.mismatch, 0, "decoder agrees with protobuf-c on mutated packets");
		printf("# mutated: %zu fast, %zu left to protobuf-c, %zu malformed\n", tm.ok, tm.slow,
		       tm.bad);
		ok(tm.bad > 0 && tm.ok > 0, "mutations reach both verdicts");
	}
	free(m);
	tc_arena_free(&a);
}

/* The shared Chrome capture, when ../shared is there. */
static void
dec_shared_trace(void)
{
	const char *sh = getenv("NX_SHARED");
	char path[512];
	struct tc_input *in = NULL;
	struct tc_err err = { 0 };
	struct tc_buf b;
	char chunk[1 << 16];
	long n;

	snprintf(path, sizeof(path), "%s/traces/mspt_chrome_gzipped.pftrace", sh ? sh : "../shared");
	if (access(path, R_OK) || tc_input_open(&in, path, &err)) {
		ok(1, "# SKIP no ../shared/traces: the Chrome capture is not checked");
		return;
	}
	tc_buf_init(&b);
	while ((n = tc_input_read(in, chunk, sizeof(chunk), &err)) > 0)
		tc_buf_add(&b, chunk, (size_t)n);
	tc_input_close(in);
	dec_trace((const uint8_t *)b.data, b.len, 20000, 3, "mspt_chrome", 0.95);
	tc_buf_free(&b);
}

/* ---- debug annotations: the fast args writer against jansson ---- */

typedef Perfetto__Protos__DebugAnnotation Annot;

/* One INSTANT named @name with annotations @an[0..n) on sequence 1 (interned state set up). */
/* An event of TrackEvent @type (3: instant, 1: slice begin) at @ts. */
static void
put_args_typed(struct tc_buf *b, int type, uint64_t ts, const char *name, Annot **an, size_t n)
{
	Pkt p = pkt(1);
	Ev te = PERFETTO__PROTOS__TRACK_EVENT__INIT;

	p.has_timestamp = 1;
	p.timestamp = ts;
	p.has_sequence_flags = 1;
	p.sequence_flags = 2;
	te.has_type = 1;
	te.type = type;
	te.name = (char *)name;
	te.n_debug_annotations = n;
	te.debug_annotations = an;
	p.track_event = &te;
	put(b, &p, NULL, 0);
}

static void
put_args_event(struct tc_buf *b, const char *name, Annot **an, size_t n)
{
	put_args_typed(b, 3, 1000, name, an, n);
}

/*
 * A timestamp that leaves the 64-bit range once scaled by its clock's unit
 * (found by the fuzz target: signed overflow) is counted bad and named; the
 * events around it stay.
 */
static void
test_clock_overflow(void)
{
	Ev te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	struct tc_err err = { 0 };
	struct st_stats st;
	struct tc_buf b;
	char path[300];
	uint64_t ts[3] = { 2, UINT64_C(341142437361588205), 3 };
	Pkt p;

	tc_buf_init(&b);
	/* clock 100 (a sequence clock) counts seconds: BOOTTIME 5 s is its 1 */
	put_snapshot(&b, 100, 1, 1000000000, false);
	for (int i = 0; i < 3; i++) {
		p = pkt(1);
		p.has_timestamp = 1;
		p.timestamp = ts[i];
		p.has_timestamp_clock_id = 1;
		p.timestamp_clock_id = 100;
		te = (Ev)PERFETTO__PROTOS__TRACK_EVENT__INIT;
		te.has_type = 1;
		te.type = 3;
		te.name = "tick";
		p.track_event = &te;
		put(&b, &p, NULL, 0);
	}
	snprintf(path, sizeof(path), "%s/clock-overflow.db", tmpdir);
	if (!ok(ingest_mem(b.data, b.len, path, &st, &err) == 0,
		"a timestamp out of range: the trace still ingests"))
		printf("#   %s\n", err.msg);
	is_int(st.instants, 2, "the events around it stay");
	is_int(st.bad_events, 1, "it is counted bad");
	if (!ok(strstr(st.first_bad, "out of range") != NULL, "and named"))
		printf("#   first bad: %s\n", st.first_bad);
	tc_buf_free(&b);
}

/* The args of the event named @name in @db are @o as json_dumps() writes it (takes @o). */
static void
is_args(sqlite3 *db, const char *name, json_t *o, const char *what)
{
	char *want = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	char *sql = tc_xasprintf("SELECT args FROM events WHERE name = "
				 "(SELECT id FROM strings WHERE s = '%s')", name);

	is_q(db, sql, want, what);
	free(sql);
	free(want);
	json_decref(o);
}

static void
test_args(void)
{
	Annot a[12], *ap[12], d1 = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT, *dp[1] = { &d1 };
	Perfetto__Protos__InternedData id = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	Perfetto__Protos__DebugAnnotationName an = PERFETTO__PROTOS__DEBUG_ANNOTATION_NAME__INIT;
	Perfetto__Protos__DebugAnnotationName *anp[1] = { &an };
	Perfetto__Protos__InternedString is = PERFETTO__PROTOS__INTERNED_STRING__INIT;
	Perfetto__Protos__InternedString *isp[1] = { &is };
	struct tc_buf b;
	struct tc_err err = { 0 };
	struct st_stats st;
	char path[300];
	json_t *o, *o2;
	char *want, *want_reals = NULL;
	sqlite3 *db = NULL;
	size_t i;
	Pkt p;

	for (i = 0; i < 12; i++) {
		a[i] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
		ap[i] = &a[i];
	}
	tc_buf_init(&b);
	/* sequence 1: cleared, interns annotation name 1 = "iname" and string 1 = "istr" */
	p = pkt(1);
	p.has_sequence_flags = 1;
	p.sequence_flags = 1;
	an.has_iid = 1;
	an.iid = 1;
	an.name = "iname";
	is.has_iid = 1;
	is.iid = 1;
	is.has_str = 1;
	is.str.data = (uint8_t *)"istr";
	is.str.len = 4;
	id.n_debug_annotation_names = 1;
	id.debug_annotation_names = anp;
	id.n_debug_annotation_string_values = 1;
	id.debug_annotation_string_values = isp;
	p.interned_data = &id;
	put(&b, &p, NULL, 0);

	/* "scalars": every scalar kind, escapes, an interned name and string */
	a[0].name = "i";
	a[0].has_int_value = 1;
	a[0].int_value = INT64_MIN;
	a[1].name = "u";
	a[1].has_uint_value = 1;
	a[1].uint_value = UINT64_MAX;
	a[2].name = "b";
	a[2].has_bool_value = 1;
	a[2].bool_value = 1;
	a[3].name = "d";
	a[3].has_double_value = 1;
	a[3].double_value = 48.211;
	a[4].name = "e";
	a[4].has_double_value = 1;
	a[4].double_value = -1.5e-7;
	a[5].name = "p";
	a[5].has_pointer_value = 1;
	a[5].pointer_value = 0xdeadbeefULL;
	a[6].name = "s \"q\" \\";
	a[6].string_value = "tab\there\nnl \x01\x1f del\x7f /";
	a[7].has_name_iid = 1;
	a[7].name_iid = 1;
	a[7].has_string_value_iid = 1;
	a[7].string_value_iid = 1;
	a[8].name = "missing";
	a[8].has_string_value_iid = 1;
	a[8].string_value_iid = 99;
	a[9].name = "none";
	a[10].has_double_value = 1;	/* no name: "arg" */
	a[10].double_value = 1e21;
	put_args_event(&b, "scalars", ap, 11);
	/* "utf8": non-ASCII goes through jansson's escapes */
	a[0] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[0].name = "h\xc3\xa9";
	a[0].string_value = "caf\xc3\xa9 \xf0\x9f\x98\x80";
	put_args_event(&b, "utf8", ap, 1);
	/* "long": strings past 8 bytes, escapes and a non-ASCII byte at various places */
	a[0] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[0].name = "a name longer than eight bytes";
	a[0].string_value = "0123456789abcdef\"x\\y\x02z, and more than 8 bytes after: 0123456789";
	a[1] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[1].name = "esc at 15";
	a[1].string_value = "abcdefghijklmno\tpqrstuvwxyz0123456789";
	put_args_event(&b, "long", ap, 2);
	a[0].string_value = "ascii for a while, then caf\xc3\xa9";
	put_args_event(&b, "long-utf8", ap, 1);
	/* "dup": a repeated name keeps its first place and its last value */
	a[0] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[0].name = "k";
	a[0].has_int_value = 1;
	a[0].int_value = 1;
	a[1] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[1].name = "m";
	a[1].has_int_value = 1;
	a[1].int_value = 2;
	a[2] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[2].name = "k";
	a[2].has_int_value = 1;
	a[2].int_value = 3;
	put_args_event(&b, "dup", ap, 3);
	/* "nested": a dict, legacy JSON, a NaN (dropped) */
	d1.name = "x";
	d1.has_bool_value = 1;
	d1.bool_value = 1;
	a[0] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[0].name = "dict";
	a[0].n_dict_entries = 1;
	a[0].dict_entries = dp;
	a[1] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[1].name = "lj";
	a[1].legacy_json_value = "[1,{\"y\":2}]";
	a[2] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[2].name = "nan";
	a[2].has_double_value = 1;
	a[2].double_value = NAN;
	put_args_event(&b, "nested", ap, 3);
	/* "badutf8": a name and a value that are not UTF-8 keep their argument */
	a[0] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[0].name = "k\xff";
	a[0].string_value = "v\xfe";
	a[1] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[1].name = "ok";
	a[1].has_int_value = 1;
	a[1].int_value = 1;
	a[2] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[2].name = "lj";
	a[2].legacy_json_value = "not json \xff";
	put_args_event(&b, "badutf8", ap, 3);
	/* "reals": whole numbers take a shorter path to the same text */
	{
		static const double rv[] = { 0.0, -0.0, 7.0, -7.0, 1275.0, 999999999999999.0,
					     1e15, -999999999999999.0, 4503599627370497.0,
					     0.5, -1e14, 9007199254740993.0 };

		for (i = 0; i < TC_ARRAY_SIZE(rv); i++) {
			static char nm[12][4];

			a[i] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
			snprintf(nm[i], sizeof(nm[i]), "r%zu", i);
			a[i].name = nm[i];
			a[i].has_double_value = 1;
			a[i].double_value = rv[i];
		}
		put_args_event(&b, "reals", ap, TC_ARRAY_SIZE(rv));
		o = json_object();
		for (i = 0; i < TC_ARRAY_SIZE(rv); i++) {
			char nm[8];

			snprintf(nm, sizeof(nm), "r%zu", i);
			json_object_set_new(o, nm, json_real(rv[i]));
		}
		want_reals = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
		json_decref(o);
	}
	/* access-set keys: the flag comes from the names (written by the fast
	 * path), or from the store's own look at the text (jansson's path) */
	a[0] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[0].name = "x";
	a[0].has_int_value = 1;
	a[1] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[1].name = "writes";
	a[1].string_value = "B";
	put_args_event(&b, "acc-fast", ap, 2);
	put_args_typed(&b, 1, 1100, "acc-begin", ap, 2);
	put_args_typed(&b, 2, 1900, NULL, NULL, 0);
	put_args_typed(&b, 1, 1200, "plain-begin", ap, 1);
	put_args_typed(&b, 2, 1800, NULL, NULL, 0);
	a[2] = (Annot)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a[2].name = "dict";
	a[2].n_dict_entries = 1;
	a[2].dict_entries = dp;
	put_args_event(&b, "acc-slow", ap, 3);
	a[1].name = "write";
	put_args_event(&b, "no-acc", ap, 2);
	put_args_event(&b, "no-acc-slow", ap, 3);

	snprintf(path, sizeof(path), "%s/args.db", tmpdir);
	if (!ok(ingest_mem(b.data, b.len, path, &st, &err) == 0, "args trace ingests"))
		printf("#   %s\n", err.msg);
	st_trace_open(&db, path, NULL);

	/* what json_dumps(JSON_COMPACT | JSON_ENSURE_ASCII) writes for the same objects */
	o = json_object();
	json_object_set_new(o, "i", json_integer(INT64_MIN));
	json_object_set_new(o, "u", json_integer(-1));
	json_object_set_new(o, "b", json_true());
	json_object_set_new(o, "d", json_real(48.211));
	json_object_set_new(o, "e", json_real(-1.5e-7));
	json_object_set_new(o, "p", json_string("0xdeadbeef"));
	json_object_set_new(o, "s \"q\" \\", json_string("tab\there\nnl \x01\x1f del\x7f /"));
	json_object_set_new(o, "iname", json_string("istr"));
	json_object_set_new(o, "missing", json_null());
	json_object_set_new(o, "none", json_null());
	json_object_set_new(o, "arg", json_real(1e21));
	want = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	is_q(db, "SELECT args FROM events WHERE name = (SELECT id FROM strings WHERE s = 'scalars')",
	     want, "args: scalars, escapes, interned name and value as jansson writes them");
	free(want);
	json_decref(o);
	o = json_object();
	json_object_set_new(o, "h\xc3\xa9", json_string("caf\xc3\xa9 \xf0\x9f\x98\x80"));
	is_args(db, "utf8", o, "args: non-ASCII as jansson escapes it");
	o = json_object();
	json_object_set_new(o, "a name longer than eight bytes",
			    json_string("0123456789abcdef\"x\\y\x02z, and more than 8 bytes after: "
					"0123456789"));
	json_object_set_new(o, "esc at 15", json_string("abcdefghijklmno\tpqrstuvwxyz0123456789"));
	is_args(db, "long", o, "args: long strings with escapes in their second and later words");
	o = json_object();
	json_object_set_new(o, "a name longer than eight bytes",
			    json_string("ascii for a while, then caf\xc3\xa9"));
	is_args(db, "long-utf8", o, "args: non-ASCII past the first words as jansson escapes it");
	is_q(db, "SELECT args FROM events WHERE name = (SELECT id FROM strings WHERE s = 'dup')",
	     "{\"k\":3,\"m\":2}", "args: a repeated name keeps its place, takes the last value");
	o = json_object();
	o2 = json_object();
	json_object_set_new(o2, "x", json_true());
	json_object_set_new(o, "dict", o2);
	json_object_set_new(o, "lj", json_loads("[1,{\"y\":2}]", JSON_DECODE_ANY, NULL));
	want = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	is_q(db, "SELECT args FROM events WHERE name = (SELECT id FROM strings WHERE s = 'nested')",
	     want, "args: nested dict and legacy JSON; NaN dropped");
	free(want);
	json_decref(o);
	is_q(db, "SELECT args FROM events WHERE name = (SELECT id FROM strings WHERE s = 'badutf8')",
	     "{\"k\\uFFFD\":\"v\\uFFFD\",\"ok\":1,\"lj\":\"not json \\uFFFD\"}",
	     "args: a name, a value and legacy JSON text that are not UTF-8 are kept, each bad "
	     "byte as U+FFFD");
	is_q(db, "SELECT args FROM events WHERE name = (SELECT id FROM strings WHERE s = 'reals')",
	     want_reals, "args: doubles, whole and not, as jansson writes them");
	free(want_reals);
	is_q(db, "SELECT group_concat(s || '=' || (flags & 1), ' ') FROM (SELECT s, flags FROM "
	     "events JOIN strings ON strings.id = events.name WHERE s LIKE '%acc%' ORDER BY s)",
	     "acc-begin=1 acc-fast=1 acc-slow=1 no-acc=0 no-acc-slow=0",
	     "args: access-set flags from the names and from the text");
	is_q(db, "SELECT args FROM events WHERE name = (SELECT id FROM strings WHERE s = "
	     "'acc-begin')", "{\"x\":0,\"writes\":\"B\"}",
	     "args: a slice keeps its begin's args");
	is_q(db, "SELECT flags & 1 FROM events WHERE name = (SELECT id FROM strings WHERE s = "
	     "'plain-begin')", "0", "args: a slice without access keys: no flag");
	sqlite3_close(db);
	tc_buf_free(&b);
}

/* ---- interned categories: redefined iids give the new name ---- */

/* INSTANT @name on sequence 1 with category iid 1, interning it as @cat
 * first when @cat is set; @flags are the packet's sequence_flags. */
static void
put_cat_event(struct tc_buf *b, const char *name, const char *cat, uint32_t flags)
{
	Pkt p = pkt(1);
	Ev te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	Perfetto__Protos__InternedData id = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	Perfetto__Protos__EventCategory k = PERFETTO__PROTOS__EVENT_CATEGORY__INIT;
	Perfetto__Protos__EventCategory *kp[1] = { &k };
	uint64_t iid[1] = { 1 };

	p.has_timestamp = 1;
	p.timestamp = 1000;
	p.has_sequence_flags = 1;
	p.sequence_flags = flags;
	if (cat) {
		k.has_iid = 1;
		k.iid = 1;
		k.name = (char *)cat;
		id.n_event_categories = 1;
		id.event_categories = kp;
		p.interned_data = &id;
	}
	te.has_type = 1;
	te.type = 3;
	te.name = (char *)name;
	te.n_category_iids = 1;
	te.category_iids = iid;
	p.track_event = &te;
	put(b, &p, NULL, 0);
}

static void
test_category_redefined(void)
{
	struct tc_buf b;
	struct tc_err err = { 0 };
	struct st_stats st;
	char path[300];
	sqlite3 *db = NULL;

	tc_buf_init(&b);
	put_cat_event(&b, "e1", "first", 1 | 2);	/* cleared, iid 1 = first */
	put_cat_event(&b, "e2", NULL, 2);		/* first again */
	put_cat_event(&b, "e3", "second", 2);		/* iid 1 redefined */
	put_cat_event(&b, "e4", NULL, 2);		/* second */
	put_cat_event(&b, "e5", "third", 1 | 2);	/* cleared and defined again */
	put_cat_event(&b, "e6", NULL, 1 | 2);		/* cleared: iid 1 unknown */
	snprintf(path, sizeof(path), "%s/cats.db", tmpdir);
	if (!ok(ingest_mem(b.data, b.len, path, &st, &err) == 0, "category trace ingests"))
		printf("#   %s\n", err.msg);
	st_trace_open(&db, path, NULL);
	is_q(db, "SELECT n.s, c.s FROM events e JOIN strings n ON n.id = e.name "
	     "LEFT JOIN strings c ON c.id = e.cat ORDER BY n.s",
	     "e1|first;e2|first;e3|second;e4|second;e5|third;e6|NULL",
	     "interned category ids follow redefinitions and clears");
	sqlite3_close(db);
	tc_buf_free(&b);
}

/*
 * Past one read of input (1 MiB) the reader frames and decodes on a second
 * thread (ingest/ing-perfetto-ahead.c): a 4 MB trace of slices on one
 * thread track must give every slice, and a cut in its last packet or a
 * bad field tag near its end the same errors, at the same bytes, as a
 * one-thread read.  *@last_off is the offset of the last packet's field.
 */
static void
build_long(struct tc_buf *b, int nslices, size_t *last_off)
{
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor thd = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	char name[32];
	Pkt p;
	Ev te;

	p = pkt(9);
	td.has_uuid = 1;
	td.uuid = 900;
	thd.has_pid = 1;
	thd.pid = 9;
	thd.has_tid = 1;
	thd.tid = 10;
	td.thread = &thd;
	p.track_descriptor = &td;
	put(b, &p, NULL, 0);
	for (int i = 0; i < 2 * nslices; i++) {
		p = pkt(9);
		p.has_timestamp = 1;
		p.timestamp = 1000000000ULL + (uint64_t)i * 1000;
		te = (Ev)PERFETTO__PROTOS__TRACK_EVENT__INIT;
		te.has_type = 1;
		te.type = i % 2 ? 2 : 1;	/* SLICE_END : SLICE_BEGIN */
		te.has_track_uuid = 1;
		te.track_uuid = 900;
		if (!(i % 2)) {
			snprintf(name, sizeof(name), "slice %d with a longer name", i / 2);
			te.name = name;
		}
		p.track_event = &te;
		*last_off = b->len;
		put(b, &p, NULL, 0);
	}
}

static void
test_decode_ahead(void)
{
	struct tc_buf b;
	struct st_stats st;
	struct tc_err err = { 0 };
	char path[300], want[200];
	size_t last = 0;
	const int n = 50000;

	tc_buf_init(&b);
	build_long(&b, n, &last);
	ok(b.len > 3 * (1u << 20), "long trace: %zu bytes, more than three reads", b.len);
	snprintf(path, sizeof(path), "%s/long.db", tmpdir);
	ok(ingest_mem(b.data, b.len, path, &st, &err) == 0, "long trace ingests: %s", err.msg);
	is_int(st.slices, n, "long trace: every slice, in batches decoded ahead");

	/* cut inside the last packet */
	snprintf(path, sizeof(path), "%s/long-cut.db", tmpdir);
	snprintf(want, sizeof(want), "mem.pftrace: truncated packet at byte %zu", last);
	ok(ingest_mem(b.data, b.len - 3, path, &st, &err) == -EINVAL, "long trace cut: -EINVAL");
	ok(!strncmp(err.msg, want, strlen(want)), "long trace cut: \"%s\" (want \"%s...\")",
	   err.msg, want);

	/* a bad field tag (wire type 7) where the last packet starts */
	((uint8_t *)b.data)[last] = 0x0f;
	snprintf(path, sizeof(path), "%s/long-bad.db", tmpdir);
	snprintf(want, sizeof(want), "mem.pftrace: not a Perfetto trace: bad field tag 0xf at "
		 "byte %zu", last);
	ok(ingest_mem(b.data, b.len, path, &st, &err) == -EINVAL, "long trace bad tag: -EINVAL");
	is_str(err.msg, want, "long trace bad tag: error names the byte");
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
	test_detect(&b);
	test_decoder_cases();
	dec_trace((const uint8_t *)b.data, b.len, SIZE_MAX, 400, "hand-built trace", 0.4);
	dec_shared_trace();
	test_args();
	test_clock_overflow();
	test_category_redefined();
	test_decode_ahead();
	tc_buf_free(&b);
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			tap_diag("could not remove the temp dir");
	}
	return tap_done();
}
