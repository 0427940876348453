/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-capture-config.c - the capture config: env file parsing
 * (quotes, comments, errors with file:line), validation, suggestions,
 * precedence and the plan built from env/layers.tsv.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/cap-int.h"
#include "tests/tap.h"

static char tmpdir[] = "/tmp/nxcapcfg.XXXXXX";

static char *
write_file(const char *name, const char *text)
{
	char *p = tc_xasprintf("%s/%s", tmpdir, name);
	FILE *f = fopen(p, "w");

	fputs(text, f);
	fclose(f);
	return p;
}

static int
collect(void *ctx, const char *key, const char *value, const char *path, int line,
	struct tc_err *err)
{
	tc_buf_printf(ctx, "%s=[%s]@%d;", key, value, line);
	return 0;
}

static void
parse_expect(const char *text, const char *want, const char *name)
{
	struct tc_buf b;
	struct tc_err err = { 0 };
	char *p = write_file("p.env", text);
	int ret;

	tc_buf_init(&b);
	ret = cap_envfile_parse(p, collect, &b, &err);
	is_int(ret, 0, name);
	is_str(b.data ? b.data : "", want, name);
	if (ret)
		printf("#   %s\n", err.msg);
	tc_buf_free(&b);
	free(p);
}

static void
parse_error(const char *text, const char *want, const char *name)
{
	struct tc_buf b;
	struct tc_err err = { 0 };
	char *p = write_file("bad.env", text), *exp = tc_xasprintf("%s/bad.env:%s", tmpdir, want);

	tc_buf_init(&b);
	ok(cap_envfile_parse(p, collect, &b, &err) < 0, "%s: fails", name);
	ok(strstr(err.msg, exp) != NULL, "%s: message names file:line", name);
	if (!strstr(err.msg, exp))
		printf("#   got '%s', want '%s'\n", err.msg, exp);
	tc_buf_free(&b);
	free(p);
	free(exp);
}

int
main(void)
{
	struct cap_config *c;
	struct cap_plan plan;
	struct tc_err err = { 0 };
	const char *src = getenv("NX_SRCDIR");
	char *f1, *env[4], *sets[2];
	int ret;

	if (!mkdtemp(tmpdir))
		tap_skip_all("mkdtemp failed");
	if (src)
		setenv("NX_HOME", src, 1);
	else if (access("env/defaults.env", R_OK) == 0)
		setenv("NX_HOME", ".", 1);
	else
		tap_skip_all("no source tree (NX_SRCDIR)");

	/* The env file format. */
	parse_expect("# c\n\nA=1\n  B = two words  # note\n", "A=[1]@3;B=[two words]@4;", "plain");
	parse_expect("export C='a # b $HOME'\n", "C=[a # b $HOME]@1;", "single quotes are literal");
	parse_expect("D=\"x \\\"y\\\" \\\\ z\"\n", "D=[x \"y\" \\ z]@1;", "double-quote escapes");
	parse_expect("E=$(rm -rf /)`id`\n", "E=[$(rm -rf /)`id`]@1;", "no shell evaluation");
	parse_expect("F=a#b\r\nG=\n", "F=[a#b]@1;G=[]@2;", "# inside a word, CRLF, empty");
	parse_error("A=1\nnot an assignment\n", "2: expected KEY=VALUE", "no '='");
	parse_error("\n\nX=\"open\n", "3: unterminated \" quote", "unterminated quote");
	parse_error("1X=2\n", "1: invalid key", "bad key");
	parse_error("X='a' b\n", "1: unexpected text after the closing quote", "text after quote");
	parse_error("=5\n", "1: missing key", "empty key");

	/* Names. */
	is_int(cap_edit_distance("kitten", "sitting"), 3, "edit distance");
	is_str(cap_key_suggest("NX_ACTIVE_STEP"), "NX_ACTIVE_STEPS", "suggest a missing letter");
	is_str(cap_key_suggest("NX_WARMUP_STPES"), "NX_WARMUP_STEPS", "suggest a swap");
	is_str(cap_key_suggest("NX_LAYRES"), "NX_LAYERS", "suggest NX_LAYERS");
	ok(cap_key_suggest("COMPLETELY_DIFFERENT") == NULL, "no suggestion when far");

	/* Precedence: --set > environment > --env FILE > defaults. */
	c = cap_config_new();
	f1 = write_file("mine.env", "NX_ACTIVE_STEPS=7\nNX_WARMUP_STEPS=2\nNX_TAGS=a,b\n"
			"NX_WAIT_STPES=1\n");
	env[0] = "NX_WARMUP_STEPS=5";
	env[1] = "NX_TAGS=env";
	env[2] = "NX_LAYRES=kernel";
	env[3] = NULL;
	sets[0] = "NX_TAGS=set";
	ret = cap_config_load(c, &f1, 1, env, sets, 1, &err);
	is_int(ret, 0, "load chain");
	is_str(cap_get(c, "NX_ACTIVE_STEPS"), "7", "file beats defaults");
	is_int(c->v[cap_key_find("NX_ACTIVE_STEPS")].src, CAP_SRC_FILE, "source file");
	is_str(cap_get(c, "NX_WARMUP_STEPS"), "5", "environment beats file");
	is_str(cap_get(c, "NX_TAGS"), "set", "--set beats environment");
	is_str(cap_get(c, "NX_OUTPUT"), "run.ntff", "default kept");
	is_int(c->v[cap_key_find("NX_OUTPUT")].src, CAP_SRC_DEFAULT, "source default");
	is_int(json_array_size(c->warnings), 2, "two misspelling warnings");
	ok(strstr(json_string_value(json_array_get(c->warnings, 0)), "did you mean NX_WAIT_STEPS")
	   != NULL, "file typo suggestion: %s", json_string_value(json_array_get(c->warnings, 0)));
	ok(strstr(json_string_value(json_array_get(c->warnings, 1)), "did you mean NX_LAYERS")
	   != NULL, "env typo suggestion");

	/* Values are validated and normalised. */
	is_int(cap_config_set(c, "NX_TORCH_WITH_STACK=Yes", &err), 0, "bool yes");
	is_str(cap_get(c, "NX_TORCH_WITH_STACK"), "1", "bool normalised");
	tc_err_clear(&err);
	ok(cap_config_set(c, "NX_ACTIVE_STEPS=-1", &err) < 0, "negative rejected");
	ok(strstr(err.msg, "NX_ACTIVE_STEPS") != NULL, "error names the key: %s", err.msg);
	tc_err_clear(&err);
	ok(cap_config_set(c, "NX_KERNEL_BACKEND=rocm", &err) < 0, "bad enum rejected");
	ok(strstr(err.msg, "auto|cupti|neuron|none") != NULL, "lists choices: %s", err.msg);
	tc_err_clear(&err);
	ok(cap_config_set(c, "NX_LAYERS=framework,gpu", &err) < 0, "bad layer rejected");
	tc_err_clear(&err);
	ok(cap_config_set(c, "NX_CORES=0-3,x", &err) < 0, "bad ranges rejected");
	tc_err_clear(&err);
	ok(cap_config_set(c, "NX_UPLOAD=ftp://x", &err) < 0, "bad url rejected");
	tc_err_clear(&err);
	ok(cap_config_set(c, "NX_ACTIVE_STEP=3", &err) < 0 &&
	   strstr(err.msg, "did you mean NX_ACTIVE_STEPS"), "--set typo is an error: %s", err.msg);
	tc_err_clear(&err);
	is_int(cap_config_set(c, "NX_LAYERS=", &err), 0, "empty layers");
	is_str(cap_get(c, "NX_LAYERS"), "none", "empty layers is none");

	/* A file error keeps file:line. */
	free(f1);
	f1 = write_file("bad-value.env", "# x\nNX_WARMUP_STEPS=many\n");
	tc_err_clear(&err);
	ok(cap_config_load_file(c, f1, CAP_SRC_FILE, &err) < 0, "bad value in file fails");
	ok(strstr(err.msg, "bad-value.env:2: NX_WARMUP_STEPS") != NULL, "file:line: key: %s",
	   err.msg);
	cap_config_free(c);

	/* The plan: Neuron + torch conflict resolved towards the kernel layer. */
	c = cap_config_new();
	sets[0] = "NX_KERNEL_BACKEND=neuron";
	sets[1] = "NX_SOURCE_MAPPING=1";
	env[0] = NULL;
	tc_err_clear(&err);
	is_int(cap_config_load(c, NULL, 0, env, sets, 2, &err), 0, "load neuron");
	is_int(cap_plan_build(&plan, c, "/cap", &err), 0, "plan neuron");
	is_str(cap_plan_var(&plan, "NEURON_RT_INSPECT_ENABLE"), "1", "inspect on");
	is_str(cap_plan_var(&plan, "NEURON_RT_INSPECT_DEVICE_PROFILE"), "session",
	       "device profile explicit");
	is_str(cap_plan_var(&plan, "NEURON_RT_INSPECT_OUTPUT_DIR"), "/cap/neuron", "output dir");
	is_str(cap_plan_var(&plan, "NKI_DEBUG_INFO"), "True", "source mapping");
	ok(cap_plan_var(&plan, "NX_FRAMEWORK_DIR") == NULL, "torch hook not loaded");
	ok(!plan.framework, "framework off after conflict");
	ok(json_array_size(c->warnings) == 1 &&
	   strstr(json_string_value(json_array_get(c->warnings, 0)), "conflict"),
	   "conflict warned");
	cap_plan_free(&plan);
	cap_config_free(c);

	free(f1);
	{
		static const char *const names[] = { "p.env", "bad.env", "mine.env",
						     "bad-value.env" };
		size_t i;
		char *p;

		for (i = 0; i < TC_ARRAY_SIZE(names); i++) {
			p = tc_xasprintf("%s/%s", tmpdir, names[i]);
			unlink(p);
			free(p);
		}
		rmdir(tmpdir);
	}
	return tap_done();
}
