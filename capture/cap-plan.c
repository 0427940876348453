/* SPDX-License-Identifier: MIT */
/*
 * capture/cap-plan.c - turn a resolved NX_* config into a plan: which
 * collectors run (auto backend detection, conflict resolution) and the exact
 * variables each layer gets, from the translation table env/layers.tsv.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/tc-json.h"
#include "capture/cap-int.h"

#ifndef CAP_BUILDDIR
#define CAP_BUILDDIR ""
#endif
#ifndef NX_LIBDIR
#define NX_LIBDIR ""
#endif

#define CAP_NDERIVED 16

struct cap_derived {
	const char *name[CAP_NDERIVED];
	char *value[CAP_NDERIVED];
	int n;
};

static void
cap_derive(struct cap_derived *d, const char *name, const char *value)
{
	d->name[d->n] = name;
	d->value[d->n] = tc_xstrdup(value ? value : "");
	d->n++;
}

static const char *
cap_lookup(const struct cap_config *c, const struct cap_derived *d, const char *name,
	   size_t len, bool *found)
{
	int i;
	char key[64];

	*found = true;
	snprintf(key, sizeof(key), "%.*s", (int)TC_MIN(len, sizeof(key) - 1), name);
	if (!strncmp(key, "NX_", 3) && cap_key_find(key) >= 0)
		return cap_get(c, key);
	for (i = 0; i < d->n; i++)
		if (!strcmp(d->name[i], key))
			return d->value[i];
	*found = false;
	return "";
}

static bool
cap_truthy(const char *v)
{
	return *v && strcmp(v, "0") && strcmp(v, "none");
}

static bool
cap_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* One term of a "when" column. */
static int
cap_eval_term(const struct cap_config *c, const struct cap_derived *d, const char *t,
	      size_t len, bool *res)
{
	bool neg = false, found, ne = false;
	const char *eq, *v;
	size_t nlen;

	while (len && isspace((unsigned char)*t)) {
		t++;
		len--;
	}
	while (len && isspace((unsigned char)t[len - 1]))
		len--;
	if (len == 6 && !strncmp(t, "always", 6)) {
		*res = true;
		return 0;
	}
	if (len && *t == '!') {
		neg = true;
		t++;
		len--;
	}
	eq = memchr(t, '=', len);
	nlen = eq ? (size_t)(eq - t) : len;
	if (eq && nlen && t[nlen - 1] == '!') {
		ne = true;
		nlen--;
	}
	v = cap_lookup(c, d, t, nlen, &found);
	if (!found || !nlen)
		return -ENOENT;
	if (eq) {
		size_t vl = len - (eq + 1 - t);

		*res = strlen(v) == vl && !strncmp(v, eq + 1, vl);
		if (ne)
			*res = !*res;
	} else {
		*res = cap_truthy(v);
	}
	if (neg)
		*res = !*res;
	return 0;
}

static char *
cap_expand(const struct cap_config *c, const struct cap_derived *d, const char *tmpl,
	   const char *where, struct tc_err *err)
{
	struct tc_buf b;
	const char *p, *end, *v;
	bool found;

	tc_buf_init(&b);
	for (p = tmpl; *p; p++) {
		if (p[0] == '$' && p[1] == '{' && (end = strchr(p, '}'))) {
			v = cap_lookup(c, d, p + 2, end - p - 2, &found);
			if (!found) {
				tc_err_set(err, -EINVAL, "%s: unknown name ${%.*s}", where,
					   (int)(end - p - 2), p + 2);
				tc_buf_free(&b);
				return NULL;
			}
			/* A substitution that is empty empties the whole row. */
			if (!*v) {
				tc_buf_free(&b);
				return tc_xstrdup("");
			}
			tc_buf_adds(&b, v);
			p = end;
		} else {
			tc_buf_addc(&b, *p);
		}
	}
	return tc_buf_steal(&b);
}

static const char *
cap_detect_backend(const char *cupti_lib, char *why, size_t whylen)
{
	static const char *const neuron_probes[] = {
		"/dev/neuron0", "/opt/aws/neuron/lib/libnrt.so.1", "/opt/aws/neuron/lib/libnrt.so",
	};
	static const char *const nvidia_probes[] = {
		"/proc/driver/nvidia/version", "/dev/nvidia0", "/dev/nvidiactl",
	};
	size_t i;

	for (i = 0; i < TC_ARRAY_SIZE(neuron_probes); i++) {
		if (cap_exists(neuron_probes[i])) {
			snprintf(why, whylen, "auto: found %s", neuron_probes[i]);
			return "neuron";
		}
	}
	for (i = 0; i < TC_ARRAY_SIZE(nvidia_probes); i++) {
		if (cap_exists(nvidia_probes[i])) {
			if (cupti_lib) {
				snprintf(why, whylen, "auto: found %s", nvidia_probes[i]);
				return "cupti";
			}
			snprintf(why, whylen,
				 "auto: found %s but this build has no CUPTI collector",
				 nvidia_probes[i]);
			return "none";
		}
	}
	snprintf(why, whylen, "auto: no Neuron or NVIDIA device found");
	return "none";
}

static char *
cap_find_cupti_lib(void)
{
	const char *env = getenv("NX_CUPTI_LIB");
	char *p;

	if (env && *env && cap_exists(env))
		return tc_xstrdup(env);
	if (CAP_BUILDDIR[0]) {
		p = tc_xasprintf("%s/capture/cupti/.libs/libnx-cupti.so", CAP_BUILDDIR);
		if (cap_exists(p))
			return p;
		free(p);
	}
	p = tc_xasprintf("%s/libnx-cupti.so", NX_LIBDIR);
	if (cap_exists(p))
		return p;
	free(p);
	return NULL;
}

static char *
cap_find_hook_dir(const char *datadir)
{
	char *p;

	if (!datadir)
		return NULL;
	p = tc_xasprintf("%s/python/sitecustomize.py", datadir);
	if (cap_exists(p)) {
		free(p);
		return tc_xasprintf("%s/python", datadir);
	}
	free(p);
	p = tc_xasprintf("%s/capture/python/sitecustomize.py", datadir);
	if (cap_exists(p)) {
		free(p);
		return tc_xasprintf("%s/capture/python", datadir);
	}
	free(p);
	return NULL;
}

static void
cap_layer(struct cap_plan *p, const char *name, bool requested, bool runs, const char *what)
{
	json_object_set_new(p->layers, name, json_pack("{s:b, s:b, s:s}", "requested", requested,
						       "runs", runs, "collector", what));
}

/*
 * A variable of the plan: {"layer","name","value","why"}.  The value is
 * kept as the bytes it is (a path need not be UTF-8, and the workload must
 * get it as it is); the rest are names from our tables.
 */
static json_t *
cap_var_new(const char *layer, const char *name, const char *value, const char *why)
{
	return json_pack("{s:o, s:o, s:o, s:o}", "layer", tc_json_str(layer), "name",
			 tc_json_str(name), "value",
			 json_stringn_nocheck(value ? value : "", value ? strlen(value) : 0),
			 "why", tc_json_str(why));
}

json_t *
cap_var_shown(json_t *v)
{
	json_t *c = json_copy(v);

	json_object_set_new(c, "value",
			    tc_json_str(json_string_value(json_object_get(v, "value"))));
	return c;
}

static int
cap_plan_table(struct cap_plan *p, struct cap_config *c, struct cap_derived *d,
	       struct tc_err *err)
{
	char *path, *line = NULL, *col[4], *s, *value = NULL, where[600];
	size_t cap = 0, len;
	ssize_t n;
	FILE *f;
	int lineno = 0, ncol, ret = 0;
	bool all, res;
	const char *t, *amp;

	path = tc_xasprintf("%s/env/layers.tsv", c->datadir ? c->datadir : ".");
	f = fopen(path, "r");
	if (!f) {
		ret = tc_err_set(err, -errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		snprintf(where, sizeof(where), "%s:%d", path, lineno);
		ncol = 0;
		for (s = strtok(line, "\t"); s && ncol < 4; s = strtok(NULL, "\t"))
			col[ncol++] = s;
		if (ncol != 4 || strtok(NULL, "\t")) {
			ret = tc_err_set(err, -EINVAL,
					 "%s: expected 4 TAB-separated columns (layer, variable, value, when)",
					 where);
			goto out;
		}
		all = true;
		for (t = col[3]; t; t = amp ? amp + 1 : NULL) {
			amp = strchr(t, '&');
			len = amp ? (size_t)(amp - t) : strlen(t);
			if (cap_eval_term(c, d, t, len, &res)) {
				ret = tc_err_set(err, -EINVAL, "%s: unknown condition '%.*s'", where,
						 (int)len, t);
				goto out;
			}
			all &= res;
		}
		value = cap_expand(c, d, col[2], where, err);
		if (!value) {
			ret = err ? err->code : -EINVAL;
			goto out;
		}
		if (all && *value)
			json_array_append_new(p->vars, cap_var_new(col[0], col[1], value,
								   col[3]));
		free(value);
		value = NULL;
	}
out:
	if (f)
		fclose(f);
	free(line);
	free(path);
	return ret;
}

int
cap_plan_build(struct cap_plan *p, struct cap_config *c, const char *capture_dir,
	       struct tc_err *err)
{
	struct cap_derived d = { .n = 0 };
	bool want_fw, want_kernel, want_system, inspect = false;
	const char *backend, *old_pp, *devprof;
	char *pp, num[32];
	uint64_t nth;
	int i, ret;

	memset(p, 0, sizeof(*p));
	p->vars = json_array();
	p->layers = json_object();
	p->capture_dir = tc_xstrdup(capture_dir);
	p->hook_dir = cap_find_hook_dir(c->datadir);
	p->cupti_lib = cap_find_cupti_lib();

	want_fw = cap_list_has(c, "NX_LAYERS", "framework") &&
		  !strcmp(cap_get(c, "NX_FRAMEWORK_PROFILER"), "torch");
	want_kernel = cap_list_has(c, "NX_LAYERS", "kernel");
	want_system = cap_list_has(c, "NX_LAYERS", "system");

	backend = cap_get(c, "NX_KERNEL_BACKEND");
	if (!strcmp(backend, "auto")) {
		backend = cap_detect_backend(p->cupti_lib, p->kernel_why, sizeof(p->kernel_why));
	} else {
		snprintf(p->kernel_why, sizeof(p->kernel_why), "NX_KERNEL_BACKEND=%s", backend);
		if (!strcmp(backend, "cupti") && !p->cupti_lib) {
			cap_config_warn(c, "NX_KERNEL_BACKEND=cupti but this build has no CUPTI "
					"collector (libnx-cupti.so): the kernel layer is off");
			backend = "none";
		}
	}
	if (!want_kernel && !want_system)
		snprintf(p->kernel_why + strlen(p->kernel_why),
			 sizeof(p->kernel_why) - strlen(p->kernel_why),
			 "; NX_LAYERS has neither kernel nor system");
	inspect = !strcmp(backend, "neuron") && (want_kernel || want_system);
	if (want_fw && !p->hook_dir) {
		cap_config_warn(c, "the torch hook (python/sitecustomize.py) was not found under "
				"%s: the framework layer is off", c->datadir ? c->datadir : "?");
		want_fw = false;
	}
	if (want_fw && inspect) {
		if (!strcmp(cap_get(c, "NX_CONFLICT_PREFER"), "framework")) {
			cap_config_warn(c, "conflict: the Neuron docs forbid NEURON_RT_INSPECT_ENABLE=1 "
					"together with torch.profiler in one process; "
					"NX_CONFLICT_PREFER=framework keeps torch.profiler and turns "
					"the Neuron runtime's inspect mode (kernel and system layers) off");
			inspect = false;
		} else {
			cap_config_warn(c, "conflict: the Neuron docs forbid NEURON_RT_INSPECT_ENABLE=1 "
					"together with torch.profiler in one process; resolved by "
					"keeping the Neuron runtime's inspect mode and not loading the "
					"torch hook (the runtime's system profile still records "
					"framework-level spans). Set NX_CONFLICT_PREFER=framework to "
					"keep torch.profiler instead, or capture twice");
			want_fw = false;
		}
	}
	if (!want_kernel)
		snprintf(p->kernel, sizeof(p->kernel), "none");
	else if (!strcmp(backend, "neuron") && !inspect)
		snprintf(p->kernel, sizeof(p->kernel), "none");
	else
		snprintf(p->kernel, sizeof(p->kernel), "%s", backend);
	p->framework = want_fw;
	p->system = inspect && want_system;

	devprof = !strcmp(p->kernel, "neuron") ? cap_get(c, "NX_NEURON_DEVICE_PROFILE") : "0";
	nth = cap_get_uint(c, "NX_NEURON_NTH_EXEC");
	num[0] = '\0';
	if (nth > 1 && !strcmp(p->kernel, "neuron")) {
		if (!strcmp(devprof, "1") || !strcmp(devprof, "model"))
			snprintf(num, sizeof(num), "%llu", (unsigned long long)(nth - 1));
		else
			cap_config_warn(c, "NX_NEURON_NTH_EXEC=%llu only applies in model mode "
					"(NX_NEURON_DEVICE_PROFILE=model); with %s every execution "
					"is recorded", (unsigned long long)nth, devprof);
	}
	if (!strcmp(p->kernel, "neuron") && !strcmp(devprof, "0"))
		cap_config_warn(c, "the kernel layer runs on Neuron with NX_NEURON_DEVICE_PROFILE=0: "
				"no device trace will be written");
	if (p->framework && !strcmp(p->kernel, "cupti"))
		cap_config_warn(c, "torch.profiler records CPU activities only while our CUPTI "
				"collector is loaded (CUPTI allows one subscriber per process)");

	old_pp = getenv("PYTHONPATH");
	pp = p->hook_dir ? (old_pp && *old_pp ? tc_xasprintf("%s:%s", p->hook_dir, old_pp)
					       : tc_xstrdup(p->hook_dir))
			 : tc_xstrdup("");
	cap_derive(&d, "framework", p->framework ? "1" : "0");
	cap_derive(&d, "kernel", p->kernel);
	cap_derive(&d, "inspect", inspect ? "1" : "0");
	cap_derive(&d, "system", p->system ? "1" : "0");
	cap_derive(&d, "device_profile", devprof);
	cap_derive(&d, "num_warmup", num);
	cap_derive(&d, "torch_activities", !strcmp(p->kernel, "cupti") ? "cpu" : "cpu,cuda");
	cap_derive(&d, "capture_dir", capture_dir);
	cap_derive(&d, "hook_dir", p->hook_dir);
	cap_derive(&d, "pythonpath", pp);
	cap_derive(&d, "cupti_lib", p->cupti_lib);
	free(pp);

	cap_layer(p, "framework", cap_list_has(c, "NX_LAYERS", "framework"), p->framework,
		  p->framework ? "torch.profiler hook" : "none");
	cap_layer(p, "kernel", want_kernel, strcmp(p->kernel, "none") != 0,
		  !strcmp(p->kernel, "cupti") ? "CUPTI injection" :
		  !strcmp(p->kernel, "neuron") ? "Neuron runtime device profile" : "none");
	cap_layer(p, "system", want_system, p->system,
		  p->system ? "Neuron runtime system profile" : "none");
	json_object_set_new(json_object_get(p->layers, "kernel"), "backend_why",
			    json_string(p->kernel_why));

	ret = cap_plan_table(p, c, &d, err);
	/* Every NX_* key reaches the workload (the hook and the CUPTI library
	 * read them), except the upload secrets. */
	for (i = 0; i < (int)cap_nkeys; i++) {
		const char *k = cap_keys[i].name;

		if (cap_keys[i].type == CAP_T_SECRET || !strcmp(k, "NX_TOKEN_FILE"))
			continue;
		const char *v = !strcmp(k, "NX_CAPTURE_DIR") ? capture_dir : cap_get(c, k);

		json_array_append_new(p->vars, cap_var_new("agent", k, v, "pass-through"));
	}
	for (i = 0; i < d.n; i++)
		free(d.value[i]);
	return ret;
}

void
cap_plan_free(struct cap_plan *p)
{
	if (!p)
		return;
	json_decref(p->vars);
	json_decref(p->layers);
	free(p->capture_dir);
	free(p->hook_dir);
	free(p->cupti_lib);
	memset(p, 0, sizeof(*p));
}

const char *
cap_plan_var(const struct cap_plan *p, const char *name)
{
	size_t i;
	json_t *v;

	json_array_foreach(p->vars, i, v)
		if (!strcmp(json_string_value(json_object_get(v, "name")), name))
			return json_string_value(json_object_get(v, "value"));
	return NULL;
}
