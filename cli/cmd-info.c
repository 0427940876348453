/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-info.c - `neuron-explorer info`: the library, or one trace's
 * devices, units and counts.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/tc-json.h"
#include "cli/cmds.h"
#include "store/library.h"

static void
info_usage(FILE *f)
{
	fprintf(f,
		"usage: neuron-explorer info [--data DIR] [--json] [ID]\n"
		"\n"
		"Without ID, list the traces in the library.  With ID, show the trace's devices,\n"
		"units (name, kind, event count) and counts.\n"
		"\n"
		"  --data DIR    data directory (default: $NX_DATA or %s)\n"
		"  --json        machine-readable output\n",
		cli_default_data_dir());
}

static json_t *
info_col(sqlite3_stmt *s, int i)
{
	switch (sqlite3_column_type(s, i)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(s, i));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(s, i));
	case SQLITE_NULL:
		return json_null();
	default:
		return tc_json_str((const char *)sqlite3_column_text(s, i));
	}
}

/*
 * Rows of @sql as an array of objects keyed by column name, or NULL when
 * they cannot all be read (said on stderr, with @what): a damaged catalog or
 * store is not shown as fewer rows.
 */
static json_t *
info_rows(sqlite3 *db, const char *what, const char *sql, const char *arg)
{
	json_t *arr = json_array();
	sqlite3_stmt *s = NULL;
	int i, rc;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		goto fail;
	if (arg)
		sqlite3_bind_text(s, 1, arg, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_t *o = json_object();

		for (i = 0; i < sqlite3_column_count(s); i++) {
			const char *col = sqlite3_column_name(s, i);

			if (!strcmp(col, "stats") && sqlite3_column_text(s, i)) {
				json_t *st = json_loads((const char *)sqlite3_column_text(s, i), 0,
							NULL);

				if (st) {
					json_object_update(o, st);
					json_decref(st);
				}
				continue;
			}
			json_object_set_new(o, col, info_col(s, i));
		}
		json_array_append_new(arr, o);
	}
	if (rc != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(s);
	return arr;
fail:
	fprintf(stderr, "neuron-explorer info: %s: %s\n", what, sqlite3_errmsg(db));
	sqlite3_finalize(s);
	json_decref(arr);
	return NULL;
}

static const char *
info_kind(const char *table, json_t *v)
{
	int k = (int)json_integer_value(v);

	return !strcmp(table, "devices") ? st_device_kind_name(k) : st_unit_kind_name(k);
}

static int
info_trace(struct st_library *lib, const char *id, bool as_json)
{
	struct tc_err err = { 0 };
	json_t *rows, *row, *devs = NULL, *units = NULL;
	sqlite3 *db = NULL;
	char *path;
	size_t i, j;
	int rc = 0;

	rows = info_rows(st_library_catalog(lib), "catalog", "SELECT id, name, tags, status,"
			 " progress, error, format, sha256, size, created_ns, stats FROM traces"
			 " WHERE id=?", id);
	if (!rows)
		return 1;
	if (!json_array_size(rows)) {
		fprintf(stderr, "neuron-explorer info: no trace '%s' in %s\n", id,
			st_library_dir(lib));
		json_decref(rows);
		return 1;
	}
	row = json_array_get(rows, 0);
	path = st_library_trace_path(lib, id);
	if (!strcmp(json_string_value(json_object_get(row, "status")), "ready") &&
	    st_trace_open(&db, path, &err) == 0) {
		devs = info_rows(db, "trace store", "SELECT id, kind, name, label, sort FROM devices"
				 " ORDER BY id", NULL);
		units = info_rows(db, "trace store", "SELECT id, device_id, kind, name, event_count,"
				  " max_depth, overlaps FROM units ORDER BY device_id, id", NULL);
		sqlite3_close(db);
		if (!devs || !units)
			rc = 1;
		for (i = 0; i < json_array_size(devs); i++) {
			json_t *d = json_array_get(devs, i);

			json_object_set_new(d, "kind", json_string(info_kind("devices",
							json_object_get(d, "kind"))));
		}
		for (i = 0; i < json_array_size(units); i++) {
			json_t *u = json_array_get(units, i);

			json_object_set_new(u, "kind", json_string(info_kind("units",
							json_object_get(u, "kind"))));
		}
		json_object_set(row, "devices", devs);
		json_object_set(row, "units_list", units);
	} else if (err.code) {
		fprintf(stderr, "neuron-explorer info: %s\n", err.msg);
		rc = 1;
	}
	free(path);
	if (as_json) {
		json_dumpf(row, stdout, JSON_COMPACT);
		putchar('\n');
		goto out;
	}
	printf("%s  %s  [%s]  %s\n", id, json_string_value(json_object_get(row, "name")),
	       json_string_value(json_object_get(row, "status")),
	       json_string_value(json_object_get(row, "format")) ?
	       json_string_value(json_object_get(row, "format")) : "");
	if (json_object_get(row, "error") && json_is_string(json_object_get(row, "error")))
		printf("  error: %s\n", json_string_value(json_object_get(row, "error")));
	if (json_object_get(row, "slices")) {
		long long ns = json_integer_value(json_object_get(row, "slices"));
		long long ni = json_integer_value(json_object_get(row, "instants"));
		long long nc = json_integer_value(json_object_get(row, "counters"));

		printf("  %lld slice%s, %lld instant%s, %lld counter sample%s, span %.6f s\n",
		       ns, tc_s(ns), ni, tc_s(ni), nc, tc_s(nc),
		       (double)(json_integer_value(json_object_get(row, "end_ns")) -
				json_integer_value(json_object_get(row, "start_ns"))) / 1e9);
	}
	if (json_is_object(json_object_get(row, "flows"))) {
		json_t *fl = json_object_get(row, "flows");
		json_int_t bad = json_integer_value(json_object_get(row, "bad_access"));

		printf("  dependency edges: %lld flow, %lld order, %lld anti, %lld output"
		       " (program order is derived when queried)\n",
		       json_integer_value(json_object_get(fl, "flow")),
		       json_integer_value(json_object_get(fl, "order")),
		       json_integer_value(json_object_get(fl, "anti")),
		       json_integer_value(json_object_get(fl, "output")));
		if (bad)
			printf("  %lld malformed access strings or waits (their events kept without them)\n",
			       bad);
	}
	for (i = 0; devs && i < json_array_size(devs); i++) {
		json_t *d = json_array_get(devs, i);
		json_int_t did = json_integer_value(json_object_get(d, "id"));

		printf("  %s %s\n", json_string_value(json_object_get(d, "kind")),
		       json_string_value(json_object_get(d, "name")));
		for (j = 0; j < json_array_size(units); j++) {
			json_t *u = json_array_get(units, j);

			if (json_integer_value(json_object_get(u, "device_id")) != did)
				continue;
			json_int_t ne = json_integer_value(json_object_get(u, "event_count"));

			printf("    %-8s %-40s %10lld event%s\n",
			       json_string_value(json_object_get(u, "kind")),
			       json_string_value(json_object_get(u, "name")), ne, ne == 1 ? "" : "s");
		}
	}
out:
	json_decref(devs);
	json_decref(units);
	json_decref(rows);
	return rc;
}

int
cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *data = NULL;
	struct st_library *lib = NULL;
	struct tc_err err = { 0 };
	bool as_json = false;
	int c, rc = 0;
	size_t i;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			data = optarg;
			break;
		case 'j':
			as_json = true;
			break;
		case 'h':
			info_usage(stdout);
			return 0;
		default:
			info_usage(stderr);
			return 2;
		}
	}
	if (st_library_open(&lib, data ? data : cli_default_data_dir(), &err) < 0) {
		fprintf(stderr, "neuron-explorer info: %s\n", err.msg);
		return 1;
	}
	if (optind < argc) {
		if (!st_id_valid(argv[optind])) {
			fprintf(stderr, "neuron-explorer info: '%s' is not a trace id"
				" (16 hex digits)\n", argv[optind]);
			rc = 1;
		} else {
			rc = info_trace(lib, argv[optind], as_json);
		}
	} else {
		json_t *rows = info_rows(st_library_catalog(lib), "catalog",
					 "SELECT id, name, tags, status, format, size, created_ns,"
					 " error, stats FROM traces ORDER BY created_ns", NULL);

		if (!rows) {
			rc = 1;
		} else if (as_json) {
			json_t *o = json_pack("{s:O}", "traces", rows);

			json_dumpf(o, stdout, JSON_COMPACT);
			putchar('\n');
			json_decref(o);
		} else {
			for (i = 0; i < json_array_size(rows); i++) {
				json_t *r = json_array_get(rows, i);
				long long nev = json_integer_value(json_object_get(r, "slices")) +
						json_integer_value(json_object_get(r, "instants")) +
						json_integer_value(json_object_get(r, "counters"));

				printf("%s  %-9s %-8s %10lld event%-1s  %s\n",
				       json_string_value(json_object_get(r, "id")),
				       json_string_value(json_object_get(r, "status")),
				       json_is_string(json_object_get(r, "format")) ?
				       json_string_value(json_object_get(r, "format")) : "-",
				       nev, tc_s(nev), json_string_value(json_object_get(r, "name")));
			}
		}
		json_decref(rows);
	}
	st_library_close(lib);
	return rc;
}
