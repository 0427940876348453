/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-ingest.c - `neuron-explorer ingest`: load trace files into the
 * data directory the server uses.  A file that fails leaves the library as
 * it was.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/tc-json.h"
#include "cli/cli-progress.h"
#include "cli/cmds.h"
#include "store/library.h"

static void
ingest_usage(FILE *f)
{
	fprintf(f,
		"usage: neuron-explorer ingest [--data DIR] [--name NAME] [--tags T1,T2] [--json]\n"
		"                              [--progress | --no-progress] FILE...\n"
		"\n"
		"Load Chrome/Kineto JSON, Perfetto protobuf or .ntff traces (gzip'd or not, detected\n"
		"by content) into the data directory.  Prints one line (or with --json one JSON\n"
		"object) per file.  Exit status 1 when any file failed; stored traces never change.\n"
		"\n"
		"  --data DIR    data directory (default: $NX_DATA or %s)\n"
		"  --name NAME   name of the run in the library (default: the file name)\n"
		"  --tags LIST   comma-separated tags\n"
		"  --json        machine-readable output\n"
		"  --progress    show each file's progress on stderr: on a terminal one line\n"
		"                updated in place (the default there), else a line per phase\n"
		"  --no-progress none, even on a terminal\n",
		cli_default_data_dir());
}

static json_t *
ingest_json(const char *file, const char *id, const struct st_stats *s, const char *fmt,
	    const char *error)
{
	json_t *o;
	char *text;

	if (error) {
		o = json_object();
		json_object_set_new(o, "file", tc_json_str(file));
		json_object_set_new(o, "status", json_string("failed"));
		json_object_set_new(o, "error", tc_json_str(error));
		return o;
	}
	text = st_stats_to_json_text(s);
	o = json_loads(text, 0, NULL);
	free(text);
	json_object_set_new(o, "id", json_string(id));
	json_object_set_new(o, "file", tc_json_str(file));
	json_object_set_new(o, "status", json_string("ready"));
	json_object_set_new(o, "format", json_string(fmt ? fmt : "unknown"));
	json_object_set_new(o, "error", json_null());
	return o;
}

static char *
ingest_format(struct st_library *lib, const char *id)
{
	sqlite3_stmt *s;
	char *fmt = NULL;

	if (sqlite3_prepare_v2(st_library_catalog(lib), "SELECT format FROM traces WHERE id=?",
			       -1, &s, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		fmt = strdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return fmt;
}

int
cmd_ingest(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "name", required_argument, NULL, 'n' },
		{ "tags", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		CLI_PROGRESS_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *data = NULL, *name = NULL, *tags = NULL;
	struct st_library *lib = NULL;
	struct tc_err err = { 0 };
	bool as_json = false;
	int c, i, failed = 0, progress = -1;	/* -1: on a terminal */

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:n:t:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			data = optarg;
			break;
		case 'n':
			name = optarg;
			break;
		case 't':
			tags = optarg;
			break;
		case 'j':
			as_json = true;
			break;
		case 'p':
		case 'P':
			progress = c == 'p';
			break;
		case 'h':
			ingest_usage(stdout);
			return 0;
		default:
			ingest_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "neuron-explorer ingest: no trace file given\n");
		ingest_usage(stderr);
		return 2;
	}
	if (st_library_open(&lib, data ? data : cli_default_data_dir(), &err) < 0) {
		fprintf(stderr, "neuron-explorer ingest: %s\n", err.msg);
		return 1;
	}
	for (i = optind; i < argc; i++) {
		const char *file = argv[i];
		struct cli_progress prog;
		char id[ST_ID_LEN + 1] = "";
		struct st_stats stats;
		char *fmt = NULL;
		int rc;

		tc_err_clear(&err);
		cli_progress_init(&prog, file, progress);
		/* the raw copy and its sha256 overlap the parse */
		rc = st_library_add_ingest(lib, file, name, tags, cli_progress, &prog, id, &stats,
					   &err);
		cli_progress_end(&prog);
		if (rc < 0) {
			/* a failed file leaves nothing behind in the library */
			if (id[0])
				st_library_delete(lib, id, NULL);
			failed++;
			if (as_json) {
				json_t *o = ingest_json(file, NULL, NULL, NULL, err.msg);

				json_dumpf(o, stdout, JSON_COMPACT);
				putchar('\n');
				json_decref(o);
			}
			fprintf(stderr, "neuron-explorer ingest: %s\n", err.msg);
			continue;
		}
		fmt = ingest_format(lib, id);
		if (as_json) {
			json_t *o = ingest_json(file, id, &stats, fmt, NULL);

			json_dumpf(o, stdout, JSON_COMPACT);
			putchar('\n');
			json_decref(o);
		} else {
			long long ns = stats.slices, ni = stats.instants, nc = stats.counters;
			long long nu = stats.units, nf = stats.edges[ST_EDGE_FLOW];

			printf("%s  %s  %s: %lld slice%s, %lld instant%s, %lld counter sample%s,"
			       " %lld unit%s, %lld flow edge%s, %.6f s\n",
			       id, fmt ? fmt : "?", file, ns, tc_s(ns), ni, tc_s(ni), nc, tc_s(nc),
			       nu, tc_s(nu), nf, tc_s(nf),
			       (double)(stats.end_ns - stats.start_ns) / 1e9);
			/* the analysis's answer, as `info` puts it, when it found any */
			if (stats.edges[ST_EDGE_ORDER] || stats.edges[ST_EDGE_ANTI] ||
			    stats.edges[ST_EDGE_OUTPUT])
				printf("  dependency edges: %lld flow, %lld order, %lld anti, %lld output\n",
				       nf, (long long)stats.edges[ST_EDGE_ORDER],
				       (long long)stats.edges[ST_EDGE_ANTI],
				       (long long)stats.edges[ST_EDGE_OUTPUT]);
			if (stats.bad_events)
				printf("  skipped %lld bad events (first: %s)\n",
				       (long long)stats.bad_events, stats.first_bad);
			if (stats.bad_access)
				printf("  %lld malformed access sets (first: %s)\n",
				       (long long)stats.bad_access, stats.first_bad_access);
		}
		fflush(stdout);
		free(fmt);
	}
	st_library_close(lib);
	return failed ? 1 : 0;
}
