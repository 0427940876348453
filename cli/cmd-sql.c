/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-sql.c - `neuron-explorer sql`: run read-only SQL against one trace,
 * with the `events` virtual table (store/st-vtab.c) that the sqlite3 shell
 * cannot see, and print the rows like the shell's list mode or as JSON.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cmds.h"
#include "store/library.h"

static void
sql_usage(FILE *f)
{
	fprintf(f,
		"usage: neuron-explorer sql [--data DIR] [--header] [--json] TRACE QUERY...\n"
		"\n"
		"Run QUERY (the arguments joined by spaces; several statements may follow each\n"
		"other) read-only against one trace and print the rows: columns joined by '|',\n"
		"NULL as nothing, one row per line.  TRACE is a trace id of the library or the\n"
		"path of a trace .db file.  Besides the stored tables (schemas/trace.sql) the\n"
		"table `events` has one row per event: id, unit, ts, dur, kind, depth, name,\n"
		"cat, value, seq, flags, args, ts_end; and `edges` one row per dependency\n"
		"edge: src, dst, kind, label.  Options come before TRACE.\n"
		"\n"
		"  --data DIR    data directory (default: $NX_DATA or %s)\n"
		"  --header      print the column names before the first row\n"
		"  --json        print each statement's rows as one JSON array of objects\n",
		cli_default_data_dir());
}

/* A column as JSON: blobs (and text that is not UTF-8) as a hex string. */
static json_t *
sql_json_col(sqlite3_stmt *s, int i)
{
	const unsigned char *p;
	json_t *j = NULL;
	char *hex;
	int n;

	switch (sqlite3_column_type(s, i)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(s, i));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(s, i));
	case SQLITE_NULL:
		return json_null();
	case SQLITE_TEXT:
		p = sqlite3_column_text(s, i);
		j = json_stringn(p ? (const char *)p : "", (size_t)sqlite3_column_bytes(s, i));
		if (j)
			return j;
		/* fall through */
	default:
		p = sqlite3_column_blob(s, i);
		n = sqlite3_column_bytes(s, i);
		hex = tc_xmalloc((size_t)n * 2 + 1);
		for (int k = 0; k < n; k++)
			sprintf(hex + 2 * k, "%02x", p[k]);
		hex[2 * n] = 0;
		j = json_string(hex);
		free(hex);
		return j;
	}
}

/* Step @s to the end, printing its rows.  Return: 0 or -EIO (message printed). */
static int
sql_print(sqlite3 *db, sqlite3_stmt *s, bool header, bool json)
{
	int n = sqlite3_column_count(s), rc;
	bool first = true;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (first && header && !json)	/* like the shell: with the first row */
			for (int i = 0; i < n; i++)
				printf("%s%s", sqlite3_column_name(s, i), i + 1 < n ? "|" : "\n");
		if (json) {
			json_t *o = json_object();

			for (int i = 0; i < n; i++)
				json_object_set_new_nocheck(o, sqlite3_column_name(s, i),
							    sql_json_col(s, i));
			fputs(first ? "[" : ",\n", stdout);
			json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
			json_decref(o);
		} else {
			for (int i = 0; i < n; i++) {
				const unsigned char *t = sqlite3_column_text(s, i);

				if (t)
					fwrite(t, 1, (size_t)sqlite3_column_bytes(s, i), stdout);
				putchar(i + 1 < n ? '|' : '\n');
			}
		}
		first = false;
	}
	if (json && n > 0)
		puts(first ? "[]" : "]");
	if (rc != SQLITE_DONE) {
		fflush(stdout);
		fprintf(stderr, "neuron-explorer sql: %s\n", sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

int
cmd_sql(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "header", no_argument, NULL, 'H' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *data = NULL, *tail;
	bool header = false, json = false;
	struct tc_err err = { 0 };
	struct tc_buf q;
	sqlite3 *db = NULL;
	char *path = NULL;
	int c, rc = 1;

	tc_buf_init(&q);
	optind = 0;
	/* "+": options stop at TRACE, so a query word may start with '-' */
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			data = optarg;
			break;
		case 'H':
			header = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			sql_usage(stdout);
			return 0;
		default:
			sql_usage(stderr);
			return 2;
		}
	}
	if (argc - optind < 2) {
		sql_usage(stderr);
		return 2;
	}
	for (int i = optind + 1; i < argc; i++) {
		if (i > optind + 1)
			tc_buf_addc(&q, ' ');
		tc_buf_adds(&q, argv[i]);
	}
	path = cli_trace_db("sql", data ? data : cli_default_data_dir(), argv[optind], true);
	if (!path)
		goto out;
	if (st_trace_open(&db, path, &err) < 0) {
		fprintf(stderr, "neuron-explorer sql: %s\n", err.msg);
		goto out;
	}
	tail = q.data;
	while (tail && *tail) {
		sqlite3_stmt *s = NULL;

		if (sqlite3_prepare_v2(db, tail, -1, &s, &tail) != SQLITE_OK) {
			fprintf(stderr, "neuron-explorer sql: %s\n", sqlite3_errmsg(db));
			goto out;
		}
		if (!s)
			continue;	/* only whitespace or a comment was left */
		c = sql_print(db, s, header, json);
		sqlite3_finalize(s);
		if (c < 0)
			goto out;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "neuron-explorer sql: writing the output: %s\n", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	sqlite3_close(db);
	free(path);
	tc_buf_free(&q);
	return rc;
}
