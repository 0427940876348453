/* SPDX-License-Identifier: MIT */
/*
 * cli/cmd-ntff.c - `neuron-explorer ntff ls|cat|verify FILE [SECTION]`:
 * inspect a .ntff run container (format: schemas/ntff.md).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/tc-jw.h"
#include "cli/cmds.h"
#include "ingest/ntff.h"

static void
ntff_usage(FILE *f)
{
	fprintf(f,
		"usage: neuron-explorer ntff ls [--json] FILE\n"
		"       neuron-explorer ntff cat [--raw] FILE [SECTION]\n"
		"       neuron-explorer ntff verify FILE\n"
		"\n"
		"Inspect a .ntff run container (one captured run: manifest, trace data of each\n"
		"layer, attachments; format in schemas/ntff.md).\n"
		"\n"
		"  ls      list the sections: index, kind, flags, stored and raw size, CRC status,\n"
		"          name; damage at the end of the file is reported after the list\n"
		"  cat     print the manifest, or write SECTION (a name or an index from ls) to\n"
		"          standard output, decompressed unless --raw\n"
		"  verify  check the CRC32 (and zlib stream) of every section; exit 1 on damage\n"
		"\n"
		"  --json  ls: one JSON object per line\n"
		"  --raw   cat: the stored bytes, still compressed\n");
}

static int
ntff_pick(struct ntff_reader *r, const char *arg)
{
	char *end;
	long i;

	i = ntff_find(r, arg);
	if (i >= 0)
		return (int)i;
	i = strtol(arg, &end, 10);
	if (*arg && !*end && i >= 0 && (size_t)i < ntff_count(r))
		return (int)i;
	return -1;
}

static int
ntff_ls(struct ntff_reader *r, const char *path, bool json)
{
	size_t i, n = ntff_count(r);
	unsigned maj, min;
	int bad = 0;

	ntff_version(r, &maj, &min);
	if (!json)
		printf("%s: .ntff %u.%u, %zu section%s\n%-3s %-10s %-4s %12s %12s %-10s %s\n",
		       path, maj, min, n, n == 1 ? "" : "s", "#", "kind", "zlib", "stored",
		       "raw", "crc", "name");
	for (i = 0; i < n; i++) {
		struct tc_err e = { 0 };
		const struct ntff_section *s;

		if (ntff_check(r, i, &e) < 0)
			bad++;
		s = ntff_section(r, i);
		if (json)
			printf("{\"index\":%zu,\"kind\":\"%s\",\"kind_id\":%d,\"compressed\":%s,"
			       "\"offset\":%" PRIu64 ",\"stored\":%" PRIu64 ",\"raw\":%" PRIu64
			       ",\"crc32\":\"%08x\",\"status\":\"%s\",\"name\":", i,
			       ntff_kind_name(s->kind), s->kind,
			       (s->flags & NTFF_F_ZLIB) ? "true" : "false", s->offset,
			       s->stored_len, s->raw_len, s->crc, ntff_status_name(s->status));
		else
			printf("%-3zu %-10s %-4s %12" PRIu64 " %12" PRIu64 " %-10s ", i,
			       ntff_kind_name(s->kind), (s->flags & NTFF_F_ZLIB) ? "yes" : "no",
			       s->stored_len, s->raw_len, ntff_status_name(s->status));
		if (json) {
			struct tc_jw w = { 0 };

			tc_jw_str(&w, s->name);	/* bytes: U+FFFD where not UTF-8 */
			printf("%s}\n", w.p);
			tc_jw_free(&w);
		} else {
			printf("%s\n", s->name);
		}
	}
	if (ntff_damage(r)) {
		fprintf(stderr, "neuron-explorer: %s: %s\n", path, ntff_damage(r));
		bad++;
	}
	return bad ? 1 : 0;
}

static int
ntff_verify(struct ntff_reader *r, const char *path)
{
	size_t i, n = ntff_count(r), ok = 0;
	int bad = 0;

	for (i = 0; i < n; i++) {
		struct tc_err e = { 0 };

		if (ntff_check(r, i, &e) < 0) {
			/* the scan's message on the section it stopped at says more */
			if (i + 1 == n && ntff_damage_listed(r))
				fprintf(stderr, "neuron-explorer: %s: %s\n", path, ntff_damage(r));
			else
				fprintf(stderr, "neuron-explorer: %s\n", e.msg);
			bad++;
		} else {
			ok++;
		}
	}
	if (ntff_damage(r) && !ntff_damage_listed(r)) {	/* a header it could not trust */
		fprintf(stderr, "neuron-explorer: %s: %s\n", path, ntff_damage(r));
		bad++;
	}
	printf("%s: %zu section%s ok, %d damaged\n", path, ok, ok == 1 ? "" : "s", bad);
	return bad ? 1 : 0;
}

static int
ntff_cat(struct ntff_reader *r, const char *path, const char *which, bool raw)
{
	struct tc_err e = { 0 };
	int i;

	if (which) {
		i = ntff_pick(r, which);
		if (i < 0) {
			fprintf(stderr, "neuron-explorer: %s: no section \"%s\" (see `ntff ls`)\n",
				path, which);
			return 1;
		}
	} else {
		size_t k;

		i = ntff_find(r, "manifest.json");
		for (k = 0; i < 0 && k < ntff_count(r); k++)
			if (ntff_section(r, k)->kind == NTFF_SEC_MANIFEST)
				i = (int)k;
		if (i < 0) {
			fprintf(stderr, "neuron-explorer: %s: no manifest section\n", path);
			return 1;
		}
	}
	if (ntff_extract(r, (size_t)i, stdout, "stdout", raw, &e) < 0 || fflush(stdout)) {
		fprintf(stderr, "neuron-explorer: %s\n", e.msg[0] ? e.msg : "write error");
		return 1;
	}
	return 0;
}

int
cmd_ntff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "raw", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ntff_reader *r = NULL;
	struct tc_err err = { 0 };
	bool json = false, raw = false;
	const char *verb, *path;
	int c, ret;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		ntff_usage(stdout);
		return 0;
	}
	if (argc < 2) {
		ntff_usage(stderr);
		return 2;
	}
	verb = argv[1];
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'r':
			raw = true;
			break;
		case 'h':
			ntff_usage(stdout);
			return 0;
		default:
			ntff_usage(stderr);
			return 2;
		}
	}
	optind++;	/* index into argv */
	if (optind >= argc) {
		fprintf(stderr, "neuron-explorer: ntff %s: missing FILE\n", verb);
		return 2;
	}
	path = argv[optind];
	if (strcmp(verb, "ls") && strcmp(verb, "cat") && strcmp(verb, "verify")) {
		fprintf(stderr, "neuron-explorer: ntff: unknown command \"%s\" (ls, cat, verify)\n",
			verb);
		return 2;
	}
	if (ntff_open(&r, path, &err) < 0) {
		fprintf(stderr, "neuron-explorer: %s\n", err.msg);
		return 1;
	}
	if (!strcmp(verb, "ls"))
		ret = ntff_ls(r, path, json);
	else if (!strcmp(verb, "verify"))
		ret = ntff_verify(r, path);
	else
		ret = ntff_cat(r, path, optind + 1 < argc ? argv[optind + 1] : NULL, raw);
	ntff_close(r);
	return ret;
}
