/* SPDX-License-Identifier: MIT */
/*
 * capture/cap-config.c - the unified NX_* config: the key table, the env
 * file reader, value validation and the precedence chain
 * (--set > process environment > --env FILE > env/defaults.env).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/tc-json.h"
#include "capture/cap-int.h"

#ifndef CAP_SRCDIR
#define CAP_SRCDIR ""
#endif
#ifndef CAP_BUILDDIR
#define CAP_BUILDDIR ""
#endif
#ifndef NX_DATADIR
#define NX_DATADIR ""
#endif

/* The key table: types and choices.  Defaults and documentation live in
 * env/defaults.env (data), checked against this table at load time. */
const struct cap_key cap_keys[] = {
	{ "NX_OUTPUT", CAP_T_PATH, NULL },
	{ "NX_CAPTURE_DIR", CAP_T_PATH, NULL },
	{ "NX_KEEP_CAPTURE_DIR", CAP_T_BOOL, NULL },
	{ "NX_COMPRESS", CAP_T_BOOL, NULL },
	{ "NX_LAYERS", CAP_T_LIST, "framework|kernel|system" },
	{ "NX_FRAMEWORK_PROFILER", CAP_T_ENUM, "torch|none" },
	{ "NX_TORCH_RECORD_SHAPES", CAP_T_BOOL, NULL },
	{ "NX_TORCH_WITH_STACK", CAP_T_BOOL, NULL },
	{ "NX_TORCH_PROFILE_MEMORY", CAP_T_BOOL, NULL },
	{ "NX_KERNEL_BACKEND", CAP_T_ENUM, "auto|cupti|neuron|none" },
	{ "NX_CONFLICT_PREFER", CAP_T_ENUM, "kernel|framework" },
	{ "NX_WAIT_STEPS", CAP_T_UINT, NULL },
	{ "NX_WARMUP_STEPS", CAP_T_UINT, NULL },
	{ "NX_ACTIVE_STEPS", CAP_T_UINT, NULL },
	{ "NX_NEURON_NTH_EXEC", CAP_T_UINT, NULL },
	{ "NX_NEURON_DEVICE_PROFILE", CAP_T_ENUM, "0|1|model|session" },
	{ "NX_DEVICE_FILTER", CAP_T_RANGES, NULL },
	{ "NX_CORES", CAP_T_RANGES, NULL },
	{ "NX_MAX_EVENTS", CAP_T_UINT, NULL },
	{ "NX_SOURCE_MAPPING", CAP_T_BOOL, NULL },
	{ "NX_NEURON_DGE_NOTIFICATIONS", CAP_T_BOOL, NULL },
	{ "NX_NEURON_PROFILE_TOOL", CAP_T_PATH, NULL },
	{ "NX_UPLOAD", CAP_T_URL, NULL },
	{ "NX_UPLOAD_WAIT", CAP_T_BOOL, NULL },
	{ "NX_TOKEN", CAP_T_SECRET, NULL },
	{ "NX_TOKEN_FILE", CAP_T_PATH, NULL },
	{ "NX_RUN_NAME", CAP_T_STR, NULL },
	{ "NX_TAGS", CAP_T_TAGS, NULL },
};
const size_t cap_nkeys = TC_ARRAY_SIZE(cap_keys);

/* NX_* variables of the environment that are not config keys. */
static const char *const cap_env_ignore[] = {
	"NX_DATA", "NX_HOME", "NX_BIN", "NX_SRCDIR", "NX_BUILDDIR", "NX_SHARED",
	"NX_CUPTI_LIB", "NX_TORCH_ACTIVITIES", "NX_FRAMEWORK_DIR", "NX_CUPTI_OUTPUT", "NX_HOOK_PID",
};

const char *
cap_src_name(enum cap_src src)
{
	switch (src) {
	case CAP_SRC_DEFAULT: return "default";
	case CAP_SRC_FILE: return "file";
	case CAP_SRC_ENV: return "environment";
	case CAP_SRC_SET: return "--set";
	default: return "unset";
	}
}

int
cap_key_find(const char *name)
{
	size_t i;

	for (i = 0; i < cap_nkeys; i++)
		if (!strcmp(cap_keys[i].name, name))
			return (int)i;
	return -1;
}

size_t
cap_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, *row, prev, tmp, d;

	row = tc_xcalloc(lb + 1, sizeof(*row));
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			tmp = row[j];
			d = prev + (toupper((unsigned char)a[i - 1]) !=
				    toupper((unsigned char)b[j - 1]));
			d = TC_MIN(d, row[j] + 1);
			d = TC_MIN(d, row[j - 1] + 1);
			row[j] = d;
			prev = tmp;
		}
	}
	d = row[lb];
	free(row);
	return d;
}

const char *
cap_key_suggest(const char *name)
{
	const char *best = NULL;
	size_t i, d, bestd = (size_t)-1, limit;

	for (i = 0; i < cap_nkeys; i++) {
		d = cap_edit_distance(name, cap_keys[i].name);
		if (d < bestd) {
			bestd = d;
			best = cap_keys[i].name;
		}
	}
	limit = TC_MAX((size_t)2, strlen(name) / 4);
	return bestd <= limit ? best : NULL;
}

struct cap_config *
cap_config_new(void)
{
	struct cap_config *c = tc_xcalloc(1, sizeof(*c));

	c->v = tc_xcalloc(cap_nkeys, sizeof(*c->v));
	c->warnings = json_array();
	return c;
}

void
cap_config_free(struct cap_config *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < cap_nkeys; i++) {
		free(c->v[i].value);
		free(c->v[i].where);
	}
	free(c->v);
	json_decref(c->warnings);
	free(c->datadir);
	free(c);
}

void
cap_config_warn(struct cap_config *c, const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(c->warnings, tc_json_str(buf));
}

static bool
cap_is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void cap_datadir_find(char *dir, size_t dirlen);

const char *
cap_datadir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX];

	if (dir[0])
		return dir;
	cap_datadir_find(dir, sizeof(dir));
	if (dir[0] && realpath(dir, exe))
		snprintf(dir, sizeof(dir), "%s", exe);
	return dir[0] ? dir : NULL;
}

static void
cap_datadir_find(char *dir, size_t dirlen)
{
	char exe[PATH_MAX], probe[PATH_MAX + 32], *slash;
	const char *env = getenv("NX_HOME");
	ssize_t n;

	if (env && *env) {
		snprintf(dir, dirlen, "%s", env);
		return;
	}
	/* Run from the build tree: use the source tree's data. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0 && CAP_BUILDDIR[0] && CAP_SRCDIR[0]) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		if (!strcmp(exe, CAP_BUILDDIR) || !strncmp(exe, CAP_BUILDDIR "/",
							    strlen(CAP_BUILDDIR) + 1)) {
			snprintf(probe, sizeof(probe), "%s/env/defaults.env", CAP_SRCDIR);
			if (cap_is_file(probe)) {
				snprintf(dir, dirlen, "%s", CAP_SRCDIR);
				return;
			}
		}
	}
	snprintf(probe, sizeof(probe), "%s/env/defaults.env", NX_DATADIR);
	if (cap_is_file(probe)) {
		snprintf(dir, dirlen, "%s", NX_DATADIR);
		return;
	}
	snprintf(probe, sizeof(probe), "%s/env/defaults.env", CAP_SRCDIR);
	if (CAP_SRCDIR[0] && cap_is_file(probe)) {
		snprintf(dir, dirlen, "%s", CAP_SRCDIR);
		return;
	}
}

/* ---- env file reader ---- */

static int
cap_parse_value(char *s, char **out, const char *path, int line, struct tc_err *err)
{
	struct tc_buf b;
	char q;
	int ret = 0;

	tc_buf_init(&b);
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '"' || *s == '\'') {
		q = *s++;
		for (; *s && *s != q; s++) {
			if (q == '"' && *s == '\\' && s[1]) {
				s++;
				tc_buf_addc(&b, *s == 'n' ? '\n' : *s == 't' ? '\t' : *s);
			} else {
				tc_buf_addc(&b, *s);
			}
		}
		if (*s != q) {
			ret = tc_err_set(err, -EINVAL, "%s:%d: unterminated %c quote", path, line,
					 q);
			goto out;
		}
		s++;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s && *s != '#') {
			ret = tc_err_set(err, -EINVAL,
					 "%s:%d: unexpected text after the closing quote: '%s'",
					 path, line, s);
			goto out;
		}
	} else {
		char *end;

		/* Unquoted: a " #" starts a comment; trailing blanks go. */
		for (end = s; *end; end++)
			if (*end == '#' && (end == s || end[-1] == ' ' || end[-1] == '\t'))
				break;
		while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		tc_buf_add(&b, s, end - s);
	}
	*out = tc_buf_steal(&b);
out:
	tc_buf_free(&b);
	return ret;
}

int
cap_envfile_parse(const char *path, cap_envfile_fn fn, void *ctx, struct tc_err *err)
{
	FILE *f;
	char *line = NULL, *p, *eq, *key, *value = NULL;
	size_t cap = 0, klen;
	ssize_t n;
	int lineno = 0, ret = 0;

	f = fopen(path, "r");
	if (!f)
		return tc_err_set(err, -errno, "%s: %s", path, strerror(errno));
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (memchr(line, '\0', n) != NULL) {
			ret = tc_err_set(err, -EINVAL, "%s:%d: NUL byte in line", path, lineno);
			goto out;
		}
		p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		if (!strncmp(p, "export", 6) && (p[6] == ' ' || p[6] == '\t')) {
			p += 6;
			while (*p == ' ' || *p == '\t')
				p++;
		}
		eq = strchr(p, '=');
		if (!eq) {
			ret = tc_err_set(err, -EINVAL, "%s:%d: expected KEY=VALUE, got '%s'", path,
					 lineno, p);
			goto out;
		}
		klen = eq - p;
		while (klen && (p[klen - 1] == ' ' || p[klen - 1] == '\t'))
			klen--;
		key = p;
		key[klen] = '\0';
		if (!klen) {
			ret = tc_err_set(err, -EINVAL, "%s:%d: missing key before '='", path, lineno);
			goto out;
		}
		for (p = key; *p; p++) {
			if (!(isalnum((unsigned char)*p) || *p == '_') ||
			    (p == key && isdigit((unsigned char)*p))) {
				ret = tc_err_set(err, -EINVAL,
						 "%s:%d: invalid key '%s' (letters, digits and _ only)",
						 path, lineno, key);
				goto out;
			}
		}
		ret = cap_parse_value(eq + 1, &value, path, lineno, err);
		if (ret)
			goto out;
		ret = fn(ctx, key, value, path, lineno, err);
		free(value);
		value = NULL;
		if (ret)
			goto out;
	}
	if (ferror(f))
		ret = tc_err_set(err, -EIO, "%s: read error", path);
out:
	free(line);
	fclose(f);
	return ret;
}

/* ---- validation ---- */

static bool
cap_in_choices(const char *choices, const char *s, size_t len)
{
	const char *p = choices, *bar;

	while (p) {
		bar = strchr(p, '|');
		if ((size_t)(bar ? bar - p : (long)strlen(p)) == len && !strncmp(p, s, len))
			return true;
		p = bar ? bar + 1 : NULL;
	}
	return false;
}

static bool
cap_is_ranges(const char *s)
{
	/* "" | N | N-M, comma separated */
	while (*s) {
		if (!isdigit((unsigned char)*s))
			return false;
		while (isdigit((unsigned char)*s))
			s++;
		if (*s == '-') {
			s++;
			if (!isdigit((unsigned char)*s))
				return false;
			while (isdigit((unsigned char)*s))
				s++;
		}
		if (*s == ',') {
			s++;
			if (!*s)
				return false;
		} else if (*s) {
			return false;
		}
	}
	return true;
}

/* cap_normalize - validate @in for key @k; *out is malloc'd. */
static int
cap_normalize(const struct cap_key *k, const char *in, char **out, char *why, size_t whylen)
{
	uint64_t u;
	const char *p, *comma;
	char *lower;
	size_t i;

	switch (k->type) {
	case CAP_T_BOOL:
		lower = tc_xstrdup(in);
		for (i = 0; lower[i]; i++)
			lower[i] = tolower((unsigned char)lower[i]);
		if (!strcmp(lower, "1") || !strcmp(lower, "true") || !strcmp(lower, "yes") ||
		    !strcmp(lower, "on")) {
			*out = tc_xstrdup("1");
		} else if (!strcmp(lower, "0") || !strcmp(lower, "false") ||
			   !strcmp(lower, "no") || !strcmp(lower, "off") || !*lower) {
			*out = tc_xstrdup("0");
		} else {
			free(lower);
			snprintf(why, whylen,
				 "'%s' is not a boolean (use 0/1, true/false, yes/no, on/off)", in);
			return -EINVAL;
		}
		free(lower);
		return 0;
	case CAP_T_UINT:
		if (tc_parse_u64(in, &u)) {
			snprintf(why, whylen, "'%s' is not a non-negative integer", in);
			return -EINVAL;
		}
		*out = tc_xasprintf("%llu", (unsigned long long)u);
		return 0;
	case CAP_T_ENUM:
		if (!cap_in_choices(k->choices, in, strlen(in))) {
			snprintf(why, whylen, "'%s' is not one of %s", in, k->choices);
			return -EINVAL;
		}
		break;
	case CAP_T_LIST:
		if (!strcmp(in, "none") || !*in) {
			*out = tc_xstrdup("none");
			return 0;
		}
		for (p = in; p; p = comma ? comma + 1 : NULL) {
			comma = strchr(p, ',');
			size_t n = comma ? (size_t)(comma - p) : strlen(p);

			if (!cap_in_choices(k->choices, p, n)) {
				snprintf(why, whylen, "'%.*s' is not one of %s (or none)",
					 (int)(comma ? comma - p : (long)strlen(p)), p, k->choices);
				return -EINVAL;
			}
		}
		break;
	case CAP_T_RANGES:
		if (!cap_is_ranges(in)) {
			snprintf(why, whylen, "'%s' is not a list of indexes like 0,2,4-7", in);
			return -EINVAL;
		}
		break;
	case CAP_T_URL:
		if (*in && strncmp(in, "http://", 7) && strncmp(in, "https://", 8)) {
			snprintf(why, whylen, "'%s' is not an http:// or https:// URL", in);
			return -EINVAL;
		}
		break;
	case CAP_T_TAGS:
		for (p = in; *p; p++) {
			if (!(isalnum((unsigned char)*p) || strchr(",_-.:=/", *p))) {
				snprintf(why, whylen, "'%s': tags are words separated by commas", in);
				return -EINVAL;
			}
		}
		break;
	default:
		break;
	}
	*out = tc_xstrdup(in);
	return 0;
}

static int
cap_config_put(struct cap_config *c, const char *key, const char *value, enum cap_src src,
	       const char *where, struct tc_err *err)
{
	char why[256], *norm = NULL;
	int i = cap_key_find(key);

	if (i < 0)
		return -ENOENT;
	if (cap_normalize(&cap_keys[i], value, &norm, why, sizeof(why)))
		return tc_err_set(err, -EINVAL, "%s: %s: %s", where, key, why);
	if (c->v[i].src > src) {
		free(norm);
		return 0;
	}
	free(c->v[i].value);
	free(c->v[i].where);
	c->v[i].value = norm;
	c->v[i].src = src;
	c->v[i].where = tc_xstrdup(where);
	return 0;
}

struct cap_file_ctx {
	struct cap_config *c;
	enum cap_src src;
};

static int
cap_file_cb(void *ctx, const char *key, const char *value, const char *path, int line,
	    struct tc_err *err)
{
	struct cap_file_ctx *fc = ctx;
	char where[PATH_MAX + 32];
	const char *sugg;
	int ret;

	snprintf(where, sizeof(where), "%s:%d", path, line);
	ret = cap_config_put(fc->c, key, value, fc->src, where, err);
	if (ret == -ENOENT) {
		sugg = cap_key_suggest(key);
		if (fc->src == CAP_SRC_DEFAULT)
			return tc_err_set(err, -EINVAL, "%s: %s is not a config key", where, key);
		if (sugg)
			cap_config_warn(fc->c, "%s: unknown key %s (did you mean %s?)", where, key,
					sugg);
		else
			cap_config_warn(fc->c, "%s: unknown key %s (ignored)", where, key);
		ret = 0;
	}
	return ret;
}

int
cap_config_load_file(struct cap_config *c, const char *path, enum cap_src src,
		     struct tc_err *err)
{
	struct cap_file_ctx fc = { c, src };

	return cap_envfile_parse(path, cap_file_cb, &fc, err);
}

int
cap_config_load_defaults(struct cap_config *c, struct tc_err *err)
{
	const char *dir = cap_datadir();
	char *path = NULL;
	size_t i;
	int ret;

	if (!dir)
		return tc_err_set(err, -ENOENT,
				  "cannot find env/defaults.env (set NX_HOME to the folder holding env/)");
	free(c->datadir);
	c->datadir = tc_xstrdup(dir);
	path = tc_xasprintf("%s/env/defaults.env", dir);
	ret = cap_config_load_file(c, path, CAP_SRC_DEFAULT, err);
	if (ret)
		goto out;
	for (i = 0; i < cap_nkeys; i++) {
		if (c->v[i].src == CAP_SRC_UNSET) {
			ret = tc_err_set(err, -EINVAL, "%s: no default for %s", path,
					 cap_keys[i].name);
			goto out;
		}
	}
out:
	free(path);
	return ret;
}

int
cap_config_load_environ(struct cap_config *c, char **envp, struct tc_err *err)
{
	char **e, *key;
	const char *eq, *sugg;
	size_t i;
	int ret = 0;
	bool ignored;

	for (e = envp; e && *e; e++) {
		if (strncmp(*e, "NX_", 3) || !(eq = strchr(*e, '=')))
			continue;
		key = tc_xstrndup(*e, eq - *e);
		ret = cap_config_put(c, key, eq + 1, CAP_SRC_ENV, "environment", err);
		if (ret == -ENOENT) {
			ret = 0;
			ignored = false;
			for (i = 0; i < TC_ARRAY_SIZE(cap_env_ignore); i++)
				ignored |= !strcmp(key, cap_env_ignore[i]);
			sugg = ignored ? NULL : cap_key_suggest(key);
			if (sugg)
				cap_config_warn(c, "environment: unknown variable %s (did you mean %s?)",
						key, sugg);
		}
		free(key);
		if (ret)
			break;
	}
	return ret;
}

int
cap_config_set(struct cap_config *c, const char *kv, struct tc_err *err)
{
	const char *eq = strchr(kv, '='), *sugg;
	char *key;
	int ret;

	if (!eq || eq == kv)
		return tc_err_set(err, -EINVAL, "--set %s: expected KEY=VALUE", kv);
	key = tc_xstrndup(kv, eq - kv);
	ret = cap_config_put(c, key, eq + 1, CAP_SRC_SET, "--set", err);
	if (ret == -ENOENT) {
		sugg = cap_key_suggest(key);
		if (sugg)
			ret = tc_err_set(err, -EINVAL, "--set: unknown key %s (did you mean %s?)",
					 key, sugg);
		else
			ret = tc_err_set(err, -EINVAL,
					 "--set: unknown key %s (see `neuron-explorer env`)", key);
	}
	free(key);
	return ret;
}

int
cap_config_load(struct cap_config *c, char **files, int nfiles, char **envp, char **sets,
		int nsets, struct tc_err *err)
{
	int i, ret;

	ret = cap_config_load_defaults(c, err);
	for (i = 0; !ret && i < nfiles; i++)
		ret = cap_config_load_file(c, files[i], CAP_SRC_FILE, err);
	if (!ret)
		ret = cap_config_load_environ(c, envp, err);
	for (i = 0; !ret && i < nsets; i++)
		ret = cap_config_set(c, sets[i], err);
	return ret;
}

const char *
cap_get(const struct cap_config *c, const char *name)
{
	int i = cap_key_find(name);

	if (i < 0 || !c->v[i].value)
		return "";
	return c->v[i].value;
}

bool
cap_get_bool(const struct cap_config *c, const char *name)
{
	return !strcmp(cap_get(c, name), "1");
}

uint64_t
cap_get_uint(const struct cap_config *c, const char *name)
{
	uint64_t u = 0;

	tc_parse_u64(cap_get(c, name), &u);
	return u;
}

bool
cap_list_has(const struct cap_config *c, const char *name, const char *item)
{
	const char *v = cap_get(c, name), *p, *comma;
	size_t n = strlen(item);

	for (p = v; p && *p; p = comma ? comma + 1 : NULL) {
		comma = strchr(p, ',');
		if ((size_t)(comma ? comma - p : (long)strlen(p)) == n && !strncmp(p, item, n))
			return true;
	}
	return false;
}

json_t *
cap_config_json(const struct cap_config *c)
{
	json_t *o = json_object(), *e;
	const char *v;
	size_t i;

	for (i = 0; i < cap_nkeys; i++) {
		v = c->v[i].value ? c->v[i].value : "";
		if (cap_keys[i].type == CAP_T_SECRET && *v)
			v = "***";
		e = json_pack("{s:o, s:s}", "value", tc_json_str(v), "source",
			      cap_src_name(c->v[i].src));
		if (c->v[i].where)
			json_object_set_new(e, "where", tc_json_str(c->v[i].where));
		json_object_set_new(o, cap_keys[i].name, e);
	}
	return o;
}

char *
cap_read_token_file(const char *path, struct tc_err *err)
{
	FILE *f = fopen(path, "r");
	char buf[4096];
	size_t n;

	if (!f) {
		tc_err_set(err, -errno, "%s: %s", path, strerror(errno));
		return NULL;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	while (n && isspace((unsigned char)buf[strlen(buf) ? strlen(buf) - 1 : 0]) && strlen(buf))
		buf[strlen(buf) - 1] = '\0';
	if (!buf[0]) {
		tc_err_set(err, -EINVAL, "%s: empty token file", path);
		return NULL;
	}
	return tc_xstrdup(buf);
}
