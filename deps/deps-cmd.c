/* SPDX-License-Identifier: MIT */
/*
 * deps/deps-cmd.c - the `deps` and `critical-path` subcommands: query the
 * dependency edges of an ingested trace from the command line.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cmds.h"
#include "common/tc-jw.h"
#include "deps/deps.h"
#include "store/library.h"

static const char deps_usage[] =
	"usage: neuron-explorer deps [--data DIR] ID EVENT [--kinds flow,order,anti,output]\n"
	"                            [--dir in|out|both] [--depth N] [--budget N] [--json]\n"
	"\n"
	"Show what event EVENT of trace ID waited for (in) and what waited for it (out):\n"
	"the chain of dependency edges up to N hops (default 1), by kind.\n"
	"  --data DIR    data directory (default: $NX_DATA or ~/.local/share/neuron-explorer)\n"
	"  --kinds LIST  edge kinds to follow (default: all)\n"
	"  --dir D       in, out or both (default both)\n"
	"  --depth N     hops to follow (default 1)\n"
	"  --budget N    stop after N edges (default 1000; the answer says \"truncated\")\n"
	"  --json        print the answer as JSON (the /deps API shape)\n";

static const char cp_usage[] =
	"usage: neuron-explorer critical-path [--data DIR] ID [--start NS --end NS] [--event EID]\n"
	"                                     [--kinds LIST] [--budget N] [--max-hops N] [--json]\n"
	"\n"
	"Walk back from the slice that ends last in the window (or from EID) along the\n"
	"predecessor that finished last, and show each hop with its waiting and working time,\n"
	"then the path's time by unit and by the kind of edge into each hop.  A slice with\n"
	"children returns after its last child, so the path goes down into it.\n"
	"  --data DIR     data directory (default: $NX_DATA or ~/.local/share/neuron-explorer)\n"
	"  --start/--end  window in trace nanoseconds (default: the whole trace)\n"
	"  --event EID    end the path at this event instead\n"
	"  --kinds LIST   edge kinds to follow (default: all)\n"
	"  --budget N     walk at most N hops (default 200000, at most 1000000)\n"
	"  --max-hops N   list the latest N of them (default 10000, at most 100000);\n"
	"                 the totals cover every hop walked\n"
	"  --json         print the answer as JSON (the /critical-path API shape)\n";

/*
 * Option --kinds of command @cmd: @arg, kinds joined with commas ("flow,order"),
 * as a mask into *@out.  Return: 0, or 2 (the usage error's exit status)
 * after saying what was wrong.
 */
static int
opt_kinds(const char *cmd, const char *arg, unsigned *out)
{
	unsigned mask = 0;
	char *dup = tc_xstrdup(arg), *save = NULL, *t;

	for (t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int k = st_edge_kind_parse(t);

		if (k < 0) {
			mask = 0;
			break;
		}
		mask |= 1u << k;
	}
	free(dup);
	if (!mask) {
		fprintf(stderr, "neuron-explorer %s: bad --kinds \"%s\" (kinds joined with commas: "
			"flow, order, anti, output)\n", cmd, arg);
		return 2;
	}
	*out = mask;
	return 0;
}

/*
 * Option @opt of command @cmd: @arg as a number in [@min, @max] into *@out.
 * Return: 0, or 2 after saying what was wrong.
 */
static int
opt_num(const char *cmd, const char *opt, const char *arg, int64_t min, int64_t max,
	int64_t *out)
{
	int64_t v;

	if (!tc_parse_i64(arg, &v) && v >= min && v <= max) {
		*out = v;
		return 0;
	}
	if (max < INT64_MAX)
		fprintf(stderr, "neuron-explorer %s: bad %s \"%s\" (%lld to %lld)\n", cmd, opt,
			arg, (long long)min, (long long)max);
	else if (min > INT64_MIN)
		fprintf(stderr, "neuron-explorer %s: bad %s \"%s\" (%lld or more)\n", cmd, opt,
			arg, (long long)min);
	else
		fprintf(stderr, "neuron-explorer %s: bad %s \"%s\" (a whole number)\n", cmd,
			opt, arg);
	return 2;
}

/* Open trace @id of data directory @data for command @cmd.  Return: 0, or -errno (said). */
static int
open_trace(const char *data, const char *id, sqlite3 **db, const char *cmd)
{
	struct tc_err err = { 0 };
	char *path = cli_trace_db(cmd, data, id, false);
	int rc;

	if (!path)
		return -ENOENT;
	rc = st_trace_open(db, path, &err);
	if (rc)
		fprintf(stderr, "neuron-explorer %s: trace %s: %s\n", cmd, id, err.msg);
	else
		st_read_begin(*db);	/* a query runs many statements */
	free(path);
	return rc;
}

/*
 * Print answer @text (@len bytes of compact JSON, as the API sends it) with
 * one member a line, and free it: a whole critical path is megabytes, and
 * reading it into a JSON value to print it cost more than the walk.  NULL:
 * command @cmd failed with @err, which is said.  Return: the exit status.
 */
static int
print_text(const char *cmd, char *text, size_t len, const struct tc_err *err)
{
	struct tc_jw w = { 0 };

	if (!text) {
		fprintf(stderr, "neuron-explorer %s: %s\n", cmd, err->msg);
		return 1;
	}
	tc_jw_indent(&w, text, len, 1);
	if (w.p)
		puts(w.p);
	tc_jw_free(&w);
	free(text);
	return 0;
}

static const char *
node_name(json_t *nodes, json_int_t id)
{
	size_t i;
	json_t *n;

	json_array_foreach(nodes, i, n)
		if (json_integer_value(json_object_get(n, "id")) == id)
			return json_string_value(json_object_get(n, "name"));
	return "?";
}

int
cmd_deps(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "kinds", required_argument, NULL, 'k' },
		{ "dir", required_argument, NULL, 'r' },
		{ "depth", required_argument, NULL, 'n' },
		{ "budget", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *data = NULL;
	unsigned kinds = DEPS_KINDS_ALL;
	int dir = DEPS_DIR_IN | DEPS_DIR_OUT, c, rc = 1;
	int64_t depth = 1, budget = 1000, eid;
	bool json = false;
	struct tc_err err = { 0 };
	sqlite3 *db = NULL;
	json_t *res = NULL;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			data = optarg;
			break;
		case 'k':
			if (opt_kinds("deps", optarg, &kinds))
				return 2;
			break;
		case 'r':
			if (!strcmp(optarg, "in"))
				dir = DEPS_DIR_IN;
			else if (!strcmp(optarg, "out"))
				dir = DEPS_DIR_OUT;
			else if (!strcmp(optarg, "both"))
				dir = DEPS_DIR_IN | DEPS_DIR_OUT;
			else {
				fprintf(stderr, "neuron-explorer deps: bad --dir \"%s\" (in, out, both)\n",
					optarg);
				return 2;
			}
			break;
		case 'n':
			if (opt_num("deps", "--depth", optarg, 0, 1000, &depth))
				return 2;
			break;
		case 'b':
			if (opt_num("deps", "--budget", optarg, 1, 10000000, &budget))
				return 2;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(deps_usage, stdout);
			return 0;
		default:
			fputs(deps_usage, stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		fputs(deps_usage, stderr);
		return 2;
	}
	if (tc_parse_i64(argv[optind + 1], &eid) || eid < 1) {
		fprintf(stderr, "neuron-explorer deps: bad event id \"%s\" (events are numbered "
			"from 1)\n", argv[optind + 1]);
		return 2;
	}
	if (!data)
		data = cli_default_data_dir();
	if (open_trace(data, argv[optind], &db, "deps"))
		goto out;
	if (json) {
		size_t len;
		char *text = deps_chain_text(db, eid, kinds, dir, (int)depth, (int)budget, &len,
					     &err);

		rc = print_text("deps", text, len, &err);
		goto out;
	}
	res = deps_chain(db, eid, kinds, dir, (int)depth, (int)budget, &err);
	if (!res) {
		fprintf(stderr, "neuron-explorer deps: %s\n", err.msg);
		goto out;
	}
	{
		json_t *nodes = json_object_get(res, "nodes"), *e;
		size_t i;

		json_array_foreach(json_object_get(res, "edges"), i, e) {
			json_int_t s = json_integer_value(json_object_get(e, "src"));
			json_int_t d = json_integer_value(json_object_get(e, "dst"));
			const char *l = json_string_value(json_object_get(e, "label"));

			printf("%8lld %-24.24s -> %8lld %-24.24s %-6s %s\n", (long long)s,
			       node_name(nodes, s), (long long)d, node_name(nodes, d),
			       json_string_value(json_object_get(e, "kind")), l ? l : "");
		}
		if (!json_array_size(json_object_get(res, "edges")))
			printf("event %lld has no dependencies of the selected kinds\n",
			       (long long)eid);
		if (json_is_true(json_object_get(res, "truncated")))
			printf("(truncated at %lld edges: raise --budget)\n", (long long)budget);
	}
	rc = 0;
out:
	json_decref(res);
	sqlite3_close(db);
	return rc;
}

/* The path's time by unit (the "units" of a critical path), with the units' names. */
static void
print_units(sqlite3 *db, json_t *units)
{
	sqlite3_stmt *st = NULL;
	json_t *u;
	size_t i;

	if (sqlite3_prepare_v2(db, "SELECT name FROM units WHERE id = ?1", -1, &st, NULL))
		st = NULL;
	printf("\n%6s %-36s %8s %14s %14s\n", "unit", "name", "hops", "work_ns", "wait_ns");
	json_array_foreach(units, i, u) {
		json_int_t id = json_integer_value(json_object_get(u, "unit"));
		const unsigned char *name = NULL;

		if (st) {
			sqlite3_bind_int64(st, 1, id);
			if (sqlite3_step(st) == SQLITE_ROW)
				name = sqlite3_column_text(st, 0);
		}
		printf("%6lld %-36.36s %8lld %14lld %14lld\n", (long long)id,
		       name ? (const char *)name : "",
		       (long long)json_integer_value(json_object_get(u, "hops")),
		       (long long)json_integer_value(json_object_get(u, "work_ns")),
		       (long long)json_integer_value(json_object_get(u, "wait_ns")));
		if (st)
			sqlite3_reset(st);
	}
	sqlite3_finalize(st);
}

/* The path's time by the kind of edge into each hop (the "kinds" of a critical path). */
static void
print_kinds(json_t *kinds)
{
	const char *k;
	json_t *v;

	printf("\n%-8s %8s %14s %14s\n", "via", "hops", "work_ns", "wait_ns");
	json_object_foreach(kinds, k, v)
		printf("%-8s %8lld %14lld %14lld\n", k,
		       (long long)json_integer_value(json_object_get(v, "hops")),
		       (long long)json_integer_value(json_object_get(v, "work_ns")),
		       (long long)json_integer_value(json_object_get(v, "wait_ns")));
}

int
cmd_critical_path(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "start", required_argument, NULL, 's' },
		{ "end", required_argument, NULL, 'e' },
		{ "event", required_argument, NULL, 'v' },
		{ "kinds", required_argument, NULL, 'k' },
		{ "max-hops", required_argument, NULL, 'm' },
		{ "budget", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *data = NULL;
	unsigned kinds = DEPS_KINDS_ALL;
	int64_t start = 0, end = 0, eid = 0, max_hops = DEPS_CP_HOPS, budget = DEPS_CP_BUDGET;
	int c, rc = 1;
	bool json = false;
	struct tc_err err = { 0 };
	sqlite3 *db = NULL;
	json_t *res = NULL;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			data = optarg;
			break;
		case 's':
			if (opt_num("critical-path", "--start", optarg, INT64_MIN, INT64_MAX, &start))
				return 2;
			break;
		case 'e':
			if (opt_num("critical-path", "--end", optarg, INT64_MIN, INT64_MAX, &end))
				return 2;
			break;
		case 'v':
			if (opt_num("critical-path", "--event", optarg, 1, INT64_MAX, &eid))
				return 2;
			break;
		case 'k':
			if (opt_kinds("critical-path", optarg, &kinds))
				return 2;
			break;
		case 'm':
			if (opt_num("critical-path", "--max-hops", optarg, 1, DEPS_CP_HOPS_MAX,
				    &max_hops))
				return 2;
			break;
		case 'b':
			if (opt_num("critical-path", "--budget", optarg, 1, DEPS_CP_BUDGET_MAX,
				    &budget))
				return 2;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(cp_usage, stdout);
			return 0;
		default:
			fputs(cp_usage, stderr);
			return 2;
		}
	}
	if (argc - optind != 1) {
		fputs(cp_usage, stderr);
		return 2;
	}
	if (end && start > end) {
		fprintf(stderr, "neuron-explorer critical-path: --start is after --end\n");
		return 2;
	}
	if (!data)
		data = cli_default_data_dir();
	if (open_trace(data, argv[optind], &db, "critical-path"))
		goto out;
	if (json) {
		size_t len;
		char *text = deps_critical_path_text(db, eid, start, end, kinds, (int)max_hops,
						     (int)budget, &len, &err);

		rc = print_text("critical-path", text, len, &err);
		goto out;
	}
	res = deps_critical_path(db, eid, start, end, kinds, (int)max_hops, (int)budget, &err);
	if (!res) {
		fprintf(stderr, "neuron-explorer critical-path: %s\n", err.msg);
		goto out;
	}
	{
		json_t *h;
		size_t i;

		printf("%8s %-28s %6s %14s %12s %12s %-7s %s\n", "event", "name", "unit", "ts",
		       "wait_ns", "work_ns", "via", "label");
		json_array_foreach(json_object_get(res, "hops"), i, h) {
			const char *k = json_string_value(json_object_get(h, "kind"));
			const char *l = json_string_value(json_object_get(h, "label"));

			printf("%8lld %-28.28s %6lld %14lld %12lld %12lld %-7s %s\n",
			       (long long)json_integer_value(json_object_get(h, "id")),
			       json_string_value(json_object_get(h, "name")),
			       (long long)json_integer_value(json_object_get(h, "unit")),
			       (long long)json_integer_value(json_object_get(h, "ts")),
			       (long long)json_integer_value(json_object_get(h, "wait_ns")),
			       (long long)json_integer_value(json_object_get(h, "work_ns")),
			       k ? k : "-", l ? l : "");
		}
		long long total = json_integer_value(json_object_get(res, "hops_total"));
		size_t listed = json_array_size(json_object_get(res, "hops"));

		printf("total %lld ns: %lld waiting, %lld working over %lld hops%s",
		       (long long)json_integer_value(json_object_get(res, "total_ns")),
		       (long long)json_integer_value(json_object_get(res, "wait_ns")),
		       (long long)json_integer_value(json_object_get(res, "work_ns")), total,
		       json_is_true(json_object_get(res, "truncated")) ? " (truncated)" : "");
		if ((long long)listed < total)
			printf(", the last %zu listed", listed);
		putchar('\n');
		print_units(db, json_object_get(res, "units"));
		print_kinds(json_object_get(res, "kinds"));
	}
	rc = 0;
out:
	json_decref(res);
	sqlite3_close(db);
	return rc;
}
