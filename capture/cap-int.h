/* SPDX-License-Identifier: MIT */
/*
 * capture/cap-int.h - private interfaces of the capture agent: the unified
 * NX_* config (table, env files, precedence), the per-layer plan that turns
 * it into the workload's environment, and the upload client.
 */
#ifndef CAP_INT_H
#define CAP_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "common/tc.h"

/* enum cap_type - how a key's value is validated and normalised. */
enum cap_type {
	CAP_T_STR,	/* free text */
	CAP_T_PATH,	/* file name, "" allowed */
	CAP_T_BOOL,	/* 0/1/true/false/yes/no/on/off, stored as "0" or "1" */
	CAP_T_UINT,	/* non-negative decimal */
	CAP_T_ENUM,	/* one of cap_key.choices ("a|b|c") */
	CAP_T_LIST,	/* comma list of cap_key.choices, or "none" */
	CAP_T_RANGES,	/* "0,2,4-7" or "" */
	CAP_T_URL,	/* http:// or https:// URL, or "" */
	CAP_T_SECRET,	/* free text, masked when printed */
	CAP_T_TAGS,	/* comma list of words */
};

/**
 * struct cap_key - one row of the config table (capture/cap-config.c).
 * @name:    the NX_* key.
 * @type:    validation.
 * @choices: "a|b" for enums and lists, NULL otherwise.
 */
struct cap_key {
	const char *name;
	enum cap_type type;
	const char *choices;
};

/* enum cap_src - where a value came from; higher wins. */
enum cap_src {
	CAP_SRC_UNSET = 0,
	CAP_SRC_DEFAULT,
	CAP_SRC_FILE,
	CAP_SRC_ENV,
	CAP_SRC_SET,
};

const char *cap_src_name(enum cap_src src);

/* cap_keys / cap_nkeys - the config table, in documentation order. */
extern const struct cap_key cap_keys[];
extern const size_t cap_nkeys;

/** cap_key_find - index of @name in cap_keys, or -1. */
int cap_key_find(const char *name);
/** cap_key_suggest - the known key closest to @name by edit distance, NULL if none is close. */
const char *cap_key_suggest(const char *name);
/** cap_edit_distance - Levenshtein distance (bytes). */
size_t cap_edit_distance(const char *a, const char *b);

/**
 * struct cap_config - the resolved NX_* config.
 * Values are owned; @warnings is a JSON array of strings (owned).
 */
struct cap_value {
	char *value;
	enum cap_src src;
	char *where;		/* "FILE:LINE", "environment", "--set", NULL */
};

struct cap_config {
	struct cap_value *v;	/* cap_nkeys entries */
	json_t *warnings;
	char *datadir;		/* the folder holding env/ and python/ */
};

/** cap_config_new - an empty config; free with cap_config_free(). */
struct cap_config *cap_config_new(void);
void cap_config_free(struct cap_config *c);

/**
 * cap_datadir - the folder that holds env/defaults.env, env/layers.tsv and
 * python/: $NX_DATA_DIR if set, else the source tree when run from the build
 * tree, else the installed $(pkgdatadir).  Static string; NULL if none found.
 */
const char *cap_datadir(void);

/**
 * cap_envfile_parse - read a KEY=VALUE file: '#' comments, blank lines,
 * optional "export ", optional '...' (literal) or "..." (\" \\ \n escapes)
 * quotes, no shell evaluation.  Calls @fn for each assignment.
 * Return: 0 or -errno with @err = "FILE:LINE: reason".
 */
typedef int (*cap_envfile_fn)(void *ctx, const char *key, const char *value,
			      const char *path, int line, struct tc_err *err);
int cap_envfile_parse(const char *path, cap_envfile_fn fn, void *ctx, struct tc_err *err);

/**
 * cap_config_load_file - apply an env file at precedence @src.  Unknown keys
 * are warnings (with the closest known key); bad values are errors
 * "FILE:LINE: NX_KEY: reason".
 */
int cap_config_load_file(struct cap_config *c, const char *path, enum cap_src src,
			 struct tc_err *err);
/** cap_config_load_defaults - cap_datadir()/env/defaults.env; every key must get a value. */
int cap_config_load_defaults(struct cap_config *c, struct tc_err *err);
/** cap_config_load_environ - NX_* variables of @envp (near-miss names are warned about). */
int cap_config_load_environ(struct cap_config *c, char **envp, struct tc_err *err);
/** cap_config_set - apply "KEY=VALUE" from --set; an unknown key is an error. */
int cap_config_set(struct cap_config *c, const char *kv, struct tc_err *err);
/**
 * cap_config_load - the whole precedence chain: defaults < each @files <
 * @envp < each @sets.
 */
int cap_config_load(struct cap_config *c, char **files, int nfiles, char **envp,
		    char **sets, int nsets, struct tc_err *err);

/** cap_get - the value of @name ("" if unset); @name must be in the table. */
const char *cap_get(const struct cap_config *c, const char *name);
bool cap_get_bool(const struct cap_config *c, const char *name);
uint64_t cap_get_uint(const struct cap_config *c, const char *name);
/** cap_list_has - whether the comma list value of @name contains @item. */
bool cap_list_has(const struct cap_config *c, const char *name, const char *item);
/** cap_config_warn - add a warning (printf style). */
void cap_config_warn(struct cap_config *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/** cap_config_json - {"KEY": {"value","source","where"}} with secrets masked. */
json_t *cap_config_json(const struct cap_config *c);

/**
 * struct cap_plan - what the capture does with a config: the effective
 * layers and backends and the exact variables each layer's tool gets.
 * @vars: JSON array of {"layer","name","value","why"} in table order; a
 * value holds the bytes the workload gets, which need not be UTF-8 (a path):
 * show it with cap_var_shown().
 */
struct cap_plan {
	bool framework;			/* torch hook loaded */
	bool system;			/* Neuron system profile */
	char kernel[16];		/* cupti | neuron | none */
	char kernel_why[160];		/* how auto resolved */
	char *capture_dir;
	char *hook_dir;			/* folder with sitecustomize.py */
	char *cupti_lib;		/* libnx-cupti.so or NULL */
	json_t *vars;
	json_t *layers;			/* {"framework": {...}, ...} */
};

/**
 * cap_plan_build - resolve @c into @p for a capture writing into @capture_dir
 * (may be a placeholder for `env`).  Conflicts go to c->warnings.
 * Return: 0 or -errno (bad layers.tsv: "FILE:LINE: reason").
 */
int cap_plan_build(struct cap_plan *p, struct cap_config *c, const char *capture_dir,
		   struct tc_err *err);
void cap_plan_free(struct cap_plan *p);
/**
 * cap_var_shown - variable @v of a plan as the manifest and `env --json` show
 * it: each byte of its value that is not UTF-8 as U+FFFD.  Return: a new
 * reference.
 */
json_t *cap_var_shown(json_t *v);
/** cap_plan_var - the value planned for variable @name, NULL if none. */
const char *cap_plan_var(const struct cap_plan *p, const char *name);

/**
 * struct cap_upload_opts - one upload.
 * @token/@name/@tags may be NULL.  @retries: extra attempts on connection
 * errors and 503.  @progress: draw a bar on stderr.
 */
struct cap_upload_opts {
	const char *token;
	const char *name;
	const char *tags;
	int retries;
	bool progress;
	bool quiet;
};

/**
 * cap_upload - POST @path as multipart field "trace" to @url/upload.
 * @resp: out, the server's JSON answer (owned by the caller) on success.
 * Return: 0, or -errno; on an HTTP error the server's body is printed to
 * stderr verbatim and @err says "HTTP STATUS".
 */
int cap_upload(const char *path, const char *url, const struct cap_upload_opts *o,
	       json_t **resp, struct tc_err *err);

/**
 * cap_upload_wait - follow trace @id on the server at @url (its base, a
 * trailing '/' allowed) until it is ready: its phase on stderr labelled
 * @label (a line rewritten on a terminal, a line per phase elsewhere), then
 * "ready: N slices, N units, N flow edges"; nothing when @quiet.
 * Return: 0 once ready; -EPROTO when the server could not ingest it (its
 * reason in @err), -ENOENT when it was deleted meanwhile, or -errno when
 * the server did not answer five times in a row.
 */
int cap_upload_wait(const char *url, const char *id, const char *label, bool quiet,
		    struct tc_err *err);

/** cap_read_token_file - first line of @path, trimmed; malloc'd or NULL with @err. */
char *cap_read_token_file(const char *path, struct tc_err *err);

#endif /* CAP_INT_H */
