/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-convert.c - `neuron-explorer convert IN OUT [--to ntff|pftrace|json]`:
 * wrap any supported trace into a .ntff (original bytes + manifest), or load
 * any supported input into a temporary store and export it as a plain
 * Perfetto trace or Chrome JSON.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cmds.h"
#include "store/library.h"
#include "ingest/ingest.h"
#include "ingest/ntff.h"
#include "ingest/perfetto-int.h"

enum { CV_NTFF, CV_PFTRACE, CV_JSON };

static void
convert_usage(FILE *f)
{
	fprintf(f,
		"usage: neuron-explorer convert [--to ntff|pftrace|json] IN OUT\n"
		"\n"
		"Convert a trace.  IN is any supported input (Chrome/Kineto JSON, Perfetto\n"
		"protobuf, .ntff; gzip'd or not; detected by content).  The output format comes\n"
		"from --to or OUT's extension (.ntff, .pftrace/.perfetto-trace/.pb, .json):\n"
		"\n"
		"  ntff     a run container holding IN's original bytes as one section plus a\n"
		"           manifest (an .ntff input is copied section by section, manifest\n"
		"           included, leaving damaged sections out)\n"
		"  pftrace  a plain Perfetto trace: tracks, slices, instants, counters, flows;\n"
		"           args, unit kinds and every dependency edge where Perfetto shows\n"
		"           them as args and descriptions: ingested again, the same trace\n"
		"  json     Chrome Trace Event JSON (X, i, C, s/f flow events, M names), for\n"
		"           tools that read it; dependency kinds other than flow are left out\n"
		"\n"
		"OUT \"-\" writes to standard output.  Exit status 1 on any error.\n");
}

static int
convert_target(const char *to, const char *out)
{
	const char *ext = strrchr(out, '.');

	if (to) {
		if (!strcmp(to, "ntff"))
			return CV_NTFF;
		if (!strcmp(to, "pftrace") || !strcmp(to, "perfetto"))
			return CV_PFTRACE;
		if (!strcmp(to, "json"))
			return CV_JSON;
		return -1;
	}
	if (!ext)
		return -1;
	if (!strcmp(ext, ".ntff"))
		return CV_NTFF;
	if (!strcmp(ext, ".pftrace") || !strcmp(ext, ".perfetto-trace") || !strcmp(ext, ".pb"))
		return CV_PFTRACE;
	if (!strcmp(ext, ".json"))
		return CV_JSON;
	return -1;
}

/* The format of @path by content (decompressing gzip), or -errno. */
static int
convert_detect(const char *path, struct tc_err *err)
{
	struct tc_input *in = NULL;
	unsigned char head[64];
	long n;
	int rc;

	rc = tc_input_open(&in, path, err);
	if (rc < 0)
		return rc;
	n = tc_input_read(in, head, sizeof(head), err);
	tc_input_close(in);
	if (n < 0)
		return (int)n;
	rc = n ? ing_detect(head, (size_t)n) : ING_FMT_UNKNOWN;
	if (rc == ING_FMT_UNKNOWN)
		return tc_err_set(err, -EINVAL, "%s: not a trace (not JSON, Perfetto or .ntff)", path);
	return rc;
}

static json_t *
convert_argv(int argc, char **argv)
{
	json_t *a = json_array();
	int i;

	json_array_append_new(a, json_string("neuron-explorer"));
	for (i = 0; i < argc; i++)
		json_array_append_new(a, json_string(argv[i]));
	return a;
}

static int
convert_to_ntff(const char *in, const char *out, int fmt, int argc, char **argv,
		struct tc_err *err)
{
	struct ntff_writer *w = NULL;
	json_t *m, *sections = json_array();
	char host[256] = "";
	const char *base = strrchr(in, '/');
	int64_t t0 = tc_now_ns();
	char *dump, *name;
	bool had_manifest = false;
	int ret = 0;

	base = base ? base + 1 : in;
	gethostname(host, sizeof(host) - 1);
	ret = ntff_writer_open(&w, out, err);
	if (ret < 0)
		goto out;
	if (fmt == ING_FMT_NTFF) {
		struct ntff_reader *r = NULL;
		size_t i;

		ret = ntff_open(&r, in, err);
		if (ret < 0)
			goto out;
		for (i = 0; i < ntff_count(r) && !ret; i++) {
			const struct ntff_section *s = ntff_section(r, i);
			void *data;
			size_t len;

			/* sections are copied as they are, the manifest included;
			 * damaged ones are left out (so this also salvages a file) */
			if (ntff_check(r, i, err) < 0) {
				fprintf(stderr, "neuron-explorer: convert: skipping: %s\n", err->msg);
				tc_err_clear(err);
				continue;
			}
			if (s->kind == NTFF_SEC_MANIFEST)
				had_manifest = true;
			ret = ntff_read(r, i, &data, &len, err);
			if (!ret)
				ret = ntff_writer_add(w, s->kind, s->name, data, len,
						      (s->flags & NTFF_F_ZLIB) != 0, err);
			if (!ret)
				json_array_append_new(sections, json_pack(
					"{s:s, s:s, s:s, s:I}", "name", s->name, "kind",
					ntff_kind_name(s->kind), "layer", "import", "size",
					(json_int_t)len));
			free(data);
		}
		if (ntff_damage(r))
			fprintf(stderr, "neuron-explorer: convert: %s: %s (the rest is left out)\n",
				in, ntff_damage(r));
		ntff_close(r);
		if (ret < 0 || had_manifest)
			goto out;
	} else {
		int kind = fmt == ING_FMT_PERFETTO ? NTFF_SEC_PERFETTO : NTFF_SEC_JSON;

		unsigned char magic[2] = { 0 };
		FILE *f = fopen(in, "rb");
		bool gz;

		/* a gzip'd input stays as it is: zlib over gzip gains nothing */
		gz = f && fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
		if (f)
			fclose(f);
		name = tc_xasprintf("import/%s", base);
		ret = ntff_writer_add_file(w, kind, name, in, !gz, err);
		if (!ret)
			json_array_append_new(sections, json_pack("{s:s, s:s, s:s}", "name", name,
								  "kind", ntff_kind_name(kind),
								  "layer", "import"));
		free(name);
		if (ret < 0)
			goto out;
	}
	m = json_pack("{s:s, s:i, s:s, s:s, s:o, s:{s:s}, s:I, s:I, s:{s:i}, s:{}, "
		      "s:{s:{s:s, s:I}}, s:O, s:[]}",
		      "format", "neuron-explorer-convert", "format_version", 1,
		      "tool_version", PACKAGE_VERSION, "host", host,
		      "command", convert_argv(argc, argv),
		      "config", "source", in,
		      "start_ns", (json_int_t)t0, "end_ns", (json_int_t)tc_now_ns(),
		      "exit", "status", 0,
		      "clock",
		      "layers", "import", "source_format", ing_format_name(fmt),
		      "clock_offset_ns", (json_int_t)0,
		      "sections", sections, "errors");
	dump = json_dumps(m, JSON_INDENT(1));
	json_decref(m);
	ret = ntff_writer_add(w, NTFF_SEC_MANIFEST, "manifest.json", dump, strlen(dump), false, err);
	free(dump);
out:
	json_decref(sections);
	if (w) {
		int rc = ntff_writer_close(w, ret < 0 ? NULL : err);

		if (!ret)
			ret = rc;
	}
	if (ret < 0)
		unlink(out);
	return ret;
}

/* ---- Chrome JSON export ---- */

static int
convert_json_event(FILE *f, json_t *ev, bool *first)
{
	int rc;

	if (fputs(*first ? "\n" : ",\n", f) == EOF)
		return -EIO;
	*first = false;
	rc = json_dumpf(ev, f, JSON_COMPACT);
	json_decref(ev);
	return rc ? -EIO : 0;
}

/*
 * @ns as the exact decimal count of microseconds JSON traces use
 * ("1623142623531272.128"): a double holds only every 256th ns of an epoch
 * clock's 1.6e18, and our reader takes the digits as written.
 */
static void
convert_us(char *buf, size_t n, int64_t ns)
{
	uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	unsigned frac = (unsigned)(a % 1000);
	int len = snprintf(buf, n, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", a / 1000, frac);

	while (len > 0 && buf[len - 1] == '0')
		buf[--len] = '\0';
	if (len > 0 && buf[len - 1] == '.')
		buf[--len] = '\0';
}

/* convert_json_event() with "ts" (and "dur" unless < 0) written exactly first. */
static int
convert_json_timed(FILE *f, json_t *ev, int64_t ts_ns, int64_t dur_ns, bool *first)
{
	char ts[32], dur[32], *body = json_dumps(ev, JSON_COMPACT);
	int rc;

	json_decref(ev);
	if (!body)
		return -EIO;
	convert_us(ts, sizeof(ts), ts_ns);
	convert_us(dur, sizeof(dur), dur_ns);
	rc = fprintf(f, "%s{\"ts\":%s%s%s%s%s", *first ? "\n" : ",\n", ts,
		     dur_ns >= 0 ? ",\"dur\":" : "", dur_ns >= 0 ? dur : "",
		     body[1] == '}' ? "" : ",", body + 1) < 0 ? -EIO : 0;
	*first = false;
	free(body);
	return rc;
}

/*
 * Chrome pid/tid of a device/unit: the real ones when the keys carry
 * integers ("pid:1234"); named ones ("pid:Traces", "tid:stream 7") would
 * all cast to 0 and merge, so they get numbers of their own.
 */
#define CV_INT_KEY(k, p) "(" k ".key LIKE '" p ":%' AND " \
	"CAST(CAST(substr(" k ".key, 5) AS INTEGER) AS TEXT) = substr(" k ".key, 5))"
#define CV_PID(d) "(CASE WHEN " CV_INT_KEY(d, "pid") " THEN CAST(substr(" d ".key, 5) AS INTEGER) " \
		  "ELSE 1000000 + " d ".id END)"
#define CV_TID(u) "(CASE WHEN " CV_INT_KEY(u, "tid") " THEN CAST(substr(" u ".key, 5) AS INTEGER) " \
		  "ELSE 1000000000 + " u ".id END)"

static int
convert_export_json(sqlite3 *db, FILE *f, const char *name, struct tc_err *err)
{
	sqlite3_stmt *s = NULL, *es = NULL;
	bool first = true;
	int ret = 0;

	if (fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f) == EOF)
		goto werr;
	/* names: one process per device, one thread per unit */
	if (sqlite3_prepare_v2(db, "SELECT " CV_TID("u") ", " CV_PID("d") ", u.name, d.name "
			       "FROM units u JOIN devices d ON d.id = u.device_id", -1, &s,
			       NULL) != SQLITE_OK)
		goto sqlerr;
	while (sqlite3_step(s) == SQLITE_ROW) {
		json_int_t tid = sqlite3_column_int64(s, 0), pid = sqlite3_column_int64(s, 1);

		if (convert_json_event(f, json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "ph", "M",
						    "name", "process_name", "pid", pid, "tid", 0,
						    "args", "name",
						    (const char *)sqlite3_column_text(s, 3)), &first) ||
		    convert_json_event(f, json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "ph", "M",
						    "name", "thread_name", "pid", pid, "tid", tid,
						    "args", "name",
						    (const char *)sqlite3_column_text(s, 2)), &first))
			goto werr;
	}
	sqlite3_finalize(s);
	s = NULL;
	if (sqlite3_prepare_v2(db, "SELECT e.id, " CV_TID("u") ", " CV_PID("d") ", e.ts, e.dur, "
			       "e.kind, coalesce(n.s, ''), c.s, e.value, e.args, u.name FROM events e "
			       "JOIN units u ON u.id = e.unit JOIN devices d ON d.id = u.device_id "
			       "LEFT JOIN strings n ON n.id = e.name "
			       "LEFT JOIN strings c ON c.id = e.cat ORDER BY e.id", -1, &s, NULL) !=
	    SQLITE_OK)
		goto sqlerr;
	while (sqlite3_step(s) == SQLITE_ROW) {
		json_int_t tid = sqlite3_column_int64(s, 1), pid = sqlite3_column_int64(s, 2);
		int64_t ts = sqlite3_column_int64(s, 3), dur = -1;
		int kind = sqlite3_column_int(s, 5);
		const char *nm = (const char *)sqlite3_column_text(s, 6);
		json_t *ev = json_pack("{s:s, s:I, s:I}", "name", nm, "pid", pid, "tid", tid);
		json_t *args = NULL;

		if (sqlite3_column_type(s, 7) != SQLITE_NULL)
			json_object_set_new(ev, "cat", json_string((const char *)
								   sqlite3_column_text(s, 7)));
		if (sqlite3_column_type(s, 9) != SQLITE_NULL)
			args = json_loads((const char *)sqlite3_column_text(s, 9), 0, NULL);
		if (kind == ST_EV_SLICE) {
			json_object_set_new(ev, "ph", json_string("X"));
			dur = sqlite3_column_int64(s, 4);
		} else if (kind == ST_EV_INSTANT) {
			json_object_set_new(ev, "ph", json_string("i"));
			json_object_set_new(ev, "s", json_string("t"));
		} else {	/* a counter series is named after its unit */
			json_object_set_new(ev, "ph", json_string("C"));
			json_object_set_new(ev, "name", json_string((const char *)
								    sqlite3_column_text(s, 10)));
			json_decref(args);
			args = json_pack("{s:f}", "value", sqlite3_column_double(s, 8));
		}
		if (!args || !json_is_object(args)) {
			json_decref(args);
			args = json_object();
		}
		if (kind != ST_EV_COUNTER)	/* every counter arg is a series */
			json_object_set_new(args, "nx.id",
					    json_integer(sqlite3_column_int64(s, 0)));
		json_object_set_new(ev, "args", args);
		if (convert_json_timed(f, ev, ts, dur, &first))
			goto werr;
	}
	sqlite3_finalize(s);
	s = NULL;
	/* flow edges as flow v1 pairs: s on the source, f (bp e) on the destination */
	if (sqlite3_prepare_v2(db, "SELECT x.rowid, a.ts, " CV_TID("ua") ", " CV_PID("da") ", "
			       "b.ts, " CV_TID("ub") ", " CV_PID("db") ", x.kind, x.label "
			       "FROM edges x "
			       "JOIN events a ON a.id = x.src JOIN units ua ON ua.id = a.unit "
			       "JOIN devices da ON da.id = ua.device_id "
			       "JOIN events b ON b.id = x.dst JOIN units ub ON ub.id = b.unit "
			       "JOIN devices db ON db.id = ub.device_id "
			       "WHERE x.kind = 0", -1, &es, NULL) != SQLITE_OK)
		goto sqlerr;
	while (sqlite3_step(es) == SQLITE_ROW) {
		json_int_t id = sqlite3_column_int64(es, 0);

		if (convert_json_timed(f, json_pack("{s:s, s:s, s:s, s:I, s:I, s:I}", "ph", "s",
						    "name", "flow", "cat", "flow", "id", id, "tid",
						    sqlite3_column_int64(es, 2), "pid",
						    sqlite3_column_int64(es, 3)),
				       sqlite3_column_int64(es, 1), -1, &first) ||
		    convert_json_timed(f, json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I}",
						    "ph", "f", "bp", "e", "name", "flow", "cat",
						    "flow", "id", id, "tid",
						    sqlite3_column_int64(es, 5), "pid",
						    sqlite3_column_int64(es, 6)),
				       sqlite3_column_int64(es, 4), -1, &first))
			goto werr;
	}
	if (fputs("\n]}\n", f) == EOF || fflush(f))
		goto werr;
	goto out;
sqlerr:
	ret = tc_err_set(err, -EIO, "reading the trace store: %s", sqlite3_errmsg(db));
	goto out;
werr:
	ret = tc_err_set(err, -EIO, "%s: write error", name);
out:
	sqlite3_finalize(s);
	sqlite3_finalize(es);
	return ret;
}

static int
convert_via_store(const char *in, const char *out, int target, struct tc_err *err)
{
	const char *tmpdir = getenv("TMPDIR");
	char rnd[17];
	char *tmp;
	struct st_writer *w = NULL;
	sqlite3 *db = NULL;
	FILE *f = NULL;
	int ret;

	tc_random_hex(rnd, 8);
	tmp = tc_xasprintf("%s/nx-convert-%s.db", tmpdir && *tmpdir ? tmpdir : "/tmp", rnd);
	ret = st_writer_open(&w, tmp, err);
	if (ret < 0)
		goto out;
	ret = ing_file(w, in, NULL, err);
	if (ret < 0) {
		st_writer_abort(w);
		goto out;
	}
	ret = st_writer_finish(w, NULL, err);
	if (ret < 0)
		goto out;
	ret = st_trace_open(&db, tmp, err);
	if (ret < 0)
		goto out;
	f = strcmp(out, "-") ? fopen(out, "wb") : stdout;
	if (!f) {
		ret = tc_err_set(err, -errno, "%s: %s", out, strerror(errno));
		goto out;
	}
	ret = target == CV_PFTRACE ? pf_export_pftrace(db, f, out, err)
				   : convert_export_json(db, f, out, err);
	if (f != stdout && fclose(f) && !ret)
		ret = tc_err_set(err, -errno, "%s: %s", out, strerror(errno));
	if (ret < 0 && f != stdout)
		unlink(out);
out:
	if (db)
		sqlite3_close(db);
	unlink(tmp);
	free(tmp);
	return ret;
}

int
cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tc_err err = { 0 };
	const char *to = NULL, *in, *out;
	int c, target, fmt, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			to = optarg;
			break;
		case 'h':
			convert_usage(stdout);
			return 0;
		default:
			convert_usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		convert_usage(stderr);
		return 2;
	}
	in = argv[optind];
	out = argv[optind + 1];
	target = convert_target(to, out);
	if (target < 0) {
		fprintf(stderr, "neuron-explorer: convert: %s: say --to ntff, pftrace or json\n",
			to ? to : out);
		return 2;
	}
	fmt = convert_detect(in, &err);
	if (fmt < 0) {
		fprintf(stderr, "neuron-explorer: %s\n", err.msg);
		return 1;
	}
	if (target == CV_NTFF) {
		if (!strcmp(out, "-")) {
			fprintf(stderr, "neuron-explorer: convert: .ntff output needs a file\n");
			return 2;
		}
		ret = convert_to_ntff(in, out, fmt, argc, argv, &err);
	} else {
		ret = convert_via_store(in, out, target, &err);
	}
	if (ret < 0) {
		fprintf(stderr, "neuron-explorer: %s\n", err.msg);
		return 1;
	}
	return 0;
}
