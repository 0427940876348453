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
#include "common/tc-json.h"
#include "cli/cli-progress.h"
#include "cli/cmds.h"
#include "store/library.h"
#include "ingest/ingest.h"
#include "ingest/ntff.h"

enum { CV_NTFF, CV_PFTRACE, CV_JSON };

static void
convert_usage(FILE *f)
{
	fprintf(f,
		"usage: neuron-explorer convert [--to ntff|pftrace|json] [--progress | --no-progress]\n"
		"                               IN OUT\n"
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
		"OUT \"-\" writes to standard output.  Exit status 1 on any error.  Loading IN\n"
		"for pftrace or json shows its progress on stderr as `ingest` does: on a\n"
		"terminal by default, --progress a line per phase anywhere, --no-progress none.\n");
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
	if (rc == ING_FMT_UNKNOWN) {
		char why[160];

		ing_detect_why(head, (size_t)n, why, sizeof(why));
		return tc_err_set(err, -EINVAL, "%s: not a trace (not JSON, Perfetto or .ntff: %s)",
				  path, why);
	}
	return rc;
}

static json_t *
convert_argv(int argc, char **argv)
{
	json_t *a = json_array();
	int i;

	json_array_append_new(a, json_string("neuron-explorer"));
	for (i = 0; i < argc; i++)
		json_array_append_new(a, tc_json_str(argv[i]));
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
					"{s:o, s:s, s:s, s:I}", "name", tc_json_str(s->name), "kind",
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
			json_array_append_new(sections, json_pack("{s:o, s:s, s:s}", "name",
								  tc_json_str(name),
								  "kind", ntff_kind_name(kind),
								  "layer", "import"));
		free(name);
		if (ret < 0)
			goto out;
	}
	/* paths and names are bytes: tc_json_str() keeps the manifest valid UTF-8 */
	m = json_pack("{s:s, s:i, s:s, s:o, s:o, s:{s:o}, s:I, s:I, s:{s:i}, s:{}, "
		      "s:{s:{s:s, s:I}}, s:O, s:[]}",
		      "format", "neuron-explorer-convert", "format_version", 1,
		      "tool_version", PACKAGE_VERSION, "host", tc_json_str(host),
		      "command", convert_argv(argc, argv),
		      "config", "source", tc_json_str(in),
		      "start_ns", (json_int_t)t0, "end_ns", (json_int_t)tc_now_ns(),
		      "exit", "status", 0,
		      "clock",
		      "layers", "import", "source_format", ing_format_name(fmt),
		      "clock_offset_ns", (json_int_t)0,
		      "sections", sections, "errors");
	dump = m ? json_dumps(m, JSON_INDENT(1)) : NULL;
	json_decref(m);
	if (!dump) {
		ret = tc_err_set(err, -ENOMEM, "%s: cannot write the manifest", out);
		goto out;
	}
	ret = ntff_writer_add(w, NTFF_SEC_MANIFEST, "manifest.json", dump, strlen(dump), false, err);
	free(dump);
out:
	json_decref(sections);
	if (w) {
		int rc = ntff_writer_close(w, ret < 0 ? NULL : err);

		if (!ret)
			ret = rc;
	}
	if (ret < 0 && strcmp(out, "-"))
		tc_remove_partial(out);
	return ret;
}

/* Load @in into a temporary store, then export it; @progress as ingest's. */
static int
convert_via_store(const char *in, const char *out, int target, int progress,
		  struct tc_err *err)
{
	const char *tmpdir = getenv("TMPDIR");
	struct ing_opts opts = { .progress = st_writer_reading };
	struct cli_progress prog;
	char rnd[17];
	char *tmp;
	struct st_writer *w = NULL;
	sqlite3 *db = NULL;
	FILE *f = NULL;
	int ret;

	cli_progress_init(&prog, in, progress);
	tc_random_hex(rnd, 8);
	tmp = tc_xasprintf("%s/nx-convert-%s.db", tmpdir && *tmpdir ? tmpdir : "/tmp", rnd);
	ret = st_writer_open(&w, tmp, err);
	if (ret < 0)
		goto out;
	st_writer_set_progress(w, cli_progress, &prog);
	opts.ctx = w;
	ret = ing_file(w, in, &opts, err);
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
	cli_progress_step(&prog, "exporting");
	ret = ing_export(db, target == CV_PFTRACE ? ING_EXPORT_PFTRACE : ING_EXPORT_JSON, f, out,
			 err);
	if (f != stdout && fclose(f) && !ret)
		ret = tc_err_set(err, -errno, "%s: %s", out, strerror(errno));
	if (ret < 0 && f != stdout)
		tc_remove_partial(out);
out:
	cli_progress_end(&prog);
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
		CLI_PROGRESS_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tc_err err = { 0 };
	const char *to = NULL, *in, *out;
	int c, target, fmt, ret, progress = -1;	/* -1: on a terminal */

	optind = 1;
	while ((c = getopt_long(argc, argv, "t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			to = optarg;
			break;
		case 'p':
		case 'P':
			progress = c == 'p';
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
		ret = convert_via_store(in, out, target, progress, &err);
	}
	if (ret < 0) {
		fprintf(stderr, "neuron-explorer: %s\n", err.msg);
		return 1;
	}
	return 0;
}
