/* SPDX-License-Identifier: MIT */
/*
 * cli/main.c - the neuron-explorer binary: dispatch to one subcommand.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "config.h"
#include "cli/cmds.h"
#include "store/library.h"
#include "store/store.h"

struct cli_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	bool heavy;		/* touches a trace's worth of memory: cli_thp_reexec(), st_pcache_setup() */
};

static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

static const struct cli_cmd cli_cmds[] = {
	{ "serve", cmd_serve, "run the trace server (library, upload, API, web UI)", true },
	{ "capture", cmd_capture, "run a workload with every profiling layer on, write run.ntff", false },
	{ "upload", cmd_upload, "send a trace file to a server", false },
	{ "env", cmd_env, "show the resolved capture config and per-layer variables", false },
	{ "ingest", cmd_ingest, "load trace files into the data directory", true },
	{ "info", cmd_info, "list the library, or show one trace", false },
	{ "sql", cmd_sql, "run read-only SQL against a trace (events as a table)", false },
	{ "convert", cmd_convert, "convert between JSON, Perfetto and .ntff", true },
	{ "ntff", cmd_ntff, "list, print, extract or verify .ntff sections", false },
	{ "deps", cmd_deps, "dependency edges and chains of an event", false },
	{ "critical-path", cmd_critical_path, "the critical path of a window or event", false },
	{ "version", cmd_version, "print the version", false },
	{ "help", cmd_help, "this list, or help on a command", false },
};

const char *
cli_default_data_dir(void)
{
	static char buf[4096];
	const char *e = getenv("NX_DATA");

	if (e && *e)
		return e;
	e = getenv("XDG_DATA_HOME");
	if (e && *e) {
		snprintf(buf, sizeof(buf), "%s/neuron-explorer", e);
		return buf;
	}
	e = getenv("HOME");
	snprintf(buf, sizeof(buf), "%s/.local/share/neuron-explorer", e && *e ? e : ".");
	return buf;
}

char *
cli_trace_db(const char *cmd, const char *data, const char *id, bool file_ok)
{
	struct stat sb;
	char *path;

	if (file_ok && stat(id, &sb) == 0)
		return tc_xstrdup(id);
	if (!st_id_valid(id)) {
		fprintf(stderr, "neuron-explorer %s: \"%s\" is %s (neuron-explorer info lists "
			"the traces)\n", cmd, id,
			file_ok ? "neither a trace id nor a file" : "not a trace id");
		return NULL;
	}
	path = tc_xasprintf("%s/traces/%s.db", data, id);
	if (stat(path, &sb) != 0) {
		fprintf(stderr, "neuron-explorer %s: no trace %s in %s (neuron-explorer info "
			"lists the traces)\n", cmd, id, data);
		free(path);
		return NULL;
	}
	return path;
}

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: neuron-explorer COMMAND [OPTIONS] [ARGS]\n\ncommands:\n");
	for (i = 0; i < sizeof(cli_cmds) / sizeof(cli_cmds[0]); i++)
		fprintf(f, "  %-14s %s\n", cli_cmds[i].name, cli_cmds[i].summary);
	fprintf(f, "\nRun 'neuron-explorer COMMAND --help' for a command's options.\n"
		   "Data directory: --data DIR, else $NX_DATA, else %s\n",
		cli_default_data_dir());
}

static int
cmd_version(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: neuron-explorer version\n\nPrint the version and exit.\n");
		return 0;
	}
	printf("neuron-explorer %s\n", PACKAGE_VERSION);
	return 0;
}

static const struct cli_cmd *
find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(cli_cmds) / sizeof(cli_cmds[0]); i++)
		if (!strcmp(cli_cmds[i].name, name))
			return &cli_cmds[i];
	return NULL;
}

static int
cmd_help(int argc, char **argv)
{
	const struct cli_cmd *c;
	char *av[] = { NULL, "--help", NULL };

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	c = find_cmd(argv[1]);
	if (!c) {
		fprintf(stderr, "neuron-explorer: unknown command '%s'\n", argv[1]);
		return 2;
	}
	av[0] = argv[1];
	return c->fn(2, av);
}

/*
 * A command whose standard output could not be written (a full disk,
 * /dev/full) failed, whatever it did otherwise: what it printed is not
 * there.  Exit status 1 unless the command already failed.
 */
static int
finish_stdout(int rc)
{
	int e;

	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	e = errno;
	fprintf(stderr, "neuron-explorer: writing standard output: %s\n",
		e ? strerror(e) : "write error");
	return rc ? rc : 1;
}

int
main(int argc, char **argv)
{
	const struct cli_cmd *c;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return finish_stdout(cmd_help(1, argv));
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return finish_stdout(cmd_version(1, argv));
	c = find_cmd(argv[1]);
	if (!c) {
		fprintf(stderr, "neuron-explorer: unknown command '%s' (see 'neuron-explorer help')\n",
			argv[1]);
		return 2;
	}
	/* the pool costs its setup (SQLite writes a free-list link into every
	 * slot): worth it where pages turn over, not for a query's few */
	if (c->heavy) {
		cli_thp_reexec(argv);
		if (st_pcache_setup() == -EINVAL) {
			fprintf(stderr, "neuron-explorer: NX_PAGE_POOL must be a slot count, 0 to 1048576 (0: off)\n");
			return 2;
		}
	}
	return finish_stdout(c->fn(argc - 1, argv + 1));
}
