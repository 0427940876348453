/* SPDX-License-Identifier: MIT */
/*
 * capture/cap-env.c - `neuron-explorer env`: print the resolved NX_* config
 * with the source of each value, and per layer the exact variables the
 * workload would get, with conflict and misspelling warnings.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/tc-json.h"
#include "capture/cap-int.h"
#include "cli/cmds.h"

extern char **environ;

static void
cap_env_usage(FILE *f)
{
	fprintf(f,
		"usage: neuron-explorer env [--env FILE]... [--set KEY=VALUE]... [--json]\n"
		"Print the resolved capture config (precedence: --set > environment NX_* >\n"
		"--env FILE > env/defaults.env) and the variables each layer gets.\n");
}

static void
cap_env_text(const struct cap_config *c, const struct cap_plan *p)
{
	size_t i;
	json_t *v, *layer;
	const char *key, *val, *last = "";

	printf("# resolved config (--set > environment > --env FILE > defaults)\n");
	for (i = 0; i < cap_nkeys; i++) {
		val = c->v[i].value ? c->v[i].value : "";
		if (cap_keys[i].type == CAP_T_SECRET && *val)
			val = "***";
		printf("%s=%s\t# %s%s%s\n", cap_keys[i].name, val, cap_src_name(c->v[i].src),
		       c->v[i].where && c->v[i].src != CAP_SRC_ENV && c->v[i].src != CAP_SRC_SET
			       ? " " : "",
		       c->v[i].where && c->v[i].src != CAP_SRC_ENV && c->v[i].src != CAP_SRC_SET
			       ? c->v[i].where : "");
	}
	printf("\n# layers\n");
	json_object_foreach(p->layers, key, layer) {
		printf("%-10s %s (%s)", key,
		       json_is_true(json_object_get(layer, "runs")) ? "runs" : "off",
		       json_string_value(json_object_get(layer, "collector")));
		if (json_object_get(layer, "backend_why"))
			printf(" [%s]", json_string_value(json_object_get(layer, "backend_why")));
		printf("\n");
	}
	printf("\n# variables the workload gets, per layer\n");
	json_array_foreach(p->vars, i, v) {
		key = json_string_value(json_object_get(v, "layer"));
		if (strcmp(key, last))
			printf("[%s]\n", key);
		last = key;
		printf("%s=%s\n", json_string_value(json_object_get(v, "name")),
		       json_string_value(json_object_get(v, "value")));
	}
}

static json_t *
cap_env_json(const struct cap_config *c, const struct cap_plan *p)
{
	json_t *o, *vars = json_object(), *flat = json_object(), *v, *l;
	const char *layer;
	size_t i;

	json_array_foreach(p->vars, i, v) {
		layer = json_string_value(json_object_get(v, "layer"));
		l = json_object_get(vars, layer);
		if (!l) {
			l = json_object();
			json_object_set_new(vars, layer, l);
		}
		json_t *shown = cap_var_shown(v);

		json_object_set(l, json_string_value(json_object_get(v, "name")),
				json_object_get(shown, "value"));
		json_object_set(flat, json_string_value(json_object_get(v, "name")),
				json_object_get(shown, "value"));
		json_decref(shown);
	}
	o = json_pack("{s:o, s:O, s:s, s:o, s:o, s:O, s:s?}", "config", cap_config_json(c),
		      "layers", p->layers, "kernel_backend", p->kernel, "variables", vars, "env",
		      flat, "warnings", c->warnings, "datadir", c->datadir);
	return o;
}

int
cmd_env(int argc, char **argv)
{
	struct cap_config *c = cap_config_new();
	struct cap_plan plan;
	struct tc_err err = { 0 };
	char **files = tc_xcalloc(argc, sizeof(char *)), **sets = tc_xcalloc(argc, sizeof(char *));
	const char *cdir;
	int nfiles = 0, nsets = 0, i, ret = 2;
	bool json = false, planned = false;
	size_t k;
	json_t *w, *o;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--env") && i + 1 < argc) {
			files[nfiles++] = argv[++i];
		} else if (!strncmp(argv[i], "--env=", 6)) {
			files[nfiles++] = argv[i] + 6;
		} else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
			sets[nsets++] = argv[++i];
		} else if (!strncmp(argv[i], "--set=", 6)) {
			sets[nsets++] = argv[i] + 6;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cap_env_usage(stdout);
			ret = 0;
			goto out;
		} else {
			fprintf(stderr, "neuron-explorer env: unknown argument '%s'\n", argv[i]);
			cap_env_usage(stderr);
			goto out;
		}
	}
	if (cap_config_load(c, files, nfiles, environ, sets, nsets, &err)) {
		fprintf(stderr, "neuron-explorer env: %s\n", err.msg);
		goto out;
	}
	cdir = *cap_get(c, "NX_CAPTURE_DIR") ? cap_get(c, "NX_CAPTURE_DIR") : "<capture dir>";
	if (cap_plan_build(&plan, c, cdir, &err)) {
		fprintf(stderr, "neuron-explorer env: %s\n", err.msg);
		planned = true;
		goto out;
	}
	planned = true;
	json_array_foreach(c->warnings, k, w)
		fprintf(stderr, "neuron-explorer: warning: %s\n", json_string_value(w));
	if (json) {
		o = cap_env_json(c, &plan);
		json_dumpf(o, stdout, JSON_INDENT(2));
		printf("\n");
		json_decref(o);
	} else {
		cap_env_text(c, &plan);
	}
	ret = 0;
out:
	if (planned)
		cap_plan_free(&plan);
	cap_config_free(c);
	free(files);
	free(sets);
	return ret;
}
