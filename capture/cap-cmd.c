/* SPDX-License-Identifier: MIT */
/*
 * capture/cap-cmd.c - `neuron-explorer capture`: resolve the config, run the
 * workload with each layer's variables, forward signals, then pack what the
 * collectors wrote into one run.ntff (and upload it when asked).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "common/tc-json.h"
#include "capture/cap-int.h"
#include "cli/cmds.h"
#include "ingest/ntff.h"

extern char **environ;

static volatile sig_atomic_t cap_child_pid;
static volatile sig_atomic_t cap_last_signal;

/* Forward signals sent by another process (kill, a supervisor).  A signal
 * the terminal generated already reached the workload, which shares our
 * process group, so it is not sent twice. */
static void
cap_on_signal(int sig, siginfo_t *si, void *uc)
{
	cap_last_signal = sig;
	if (cap_child_pid > 0 && (si->si_code == SI_USER || si->si_code == SI_QUEUE))
		kill(cap_child_pid, sig);
}

static void
cap_usage(FILE *f)
{
	fprintf(f,
		"usage: neuron-explorer capture [--env FILE]... [--set KEY=VALUE]... [--upload URL]\n"
		"                               [--wait] [-o run.ntff] [-q] -- CMD [ARGS...]\n"
		"Run CMD with the capture layers of the NX_* config and write one run.ntff.\n"
		"Exit status: CMD's own (128+N when killed by signal N); `neuron-explorer env`\n"
		"shows what would be set.\n");
}

struct cap_run {
	struct cap_config *cfg;
	struct cap_plan plan;
	char *capture_dir;
	bool temp_dir;
	json_t *manifest;
	json_t *sections;
	json_t *errors;
	bool quiet;
};

static void
cap_warn(struct cap_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
cap_warn(struct cap_run *r, const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "neuron-explorer: warning: %s\n", buf);
	json_array_append_new(r->errors, tc_json_str(buf));
}

static json_t *
cap_clock_pair(void)
{
	struct timespec rt, mono, boot;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	return json_pack("{s:I, s:I, s:I}",
			 "realtime_ns", (json_int_t)rt.tv_sec * 1000000000 + rt.tv_nsec,
			 "monotonic_ns", (json_int_t)mono.tv_sec * 1000000000 + mono.tv_nsec,
			 "boottime_ns", (json_int_t)boot.tv_sec * 1000000000 + boot.tv_nsec);
}

static int
cap_make_dirs(struct cap_run *r, struct tc_err *err)
{
	const char *want = cap_get(r->cfg, "NX_CAPTURE_DIR"), *tmp = getenv("TMPDIR");
	static const char *const subs[] = { "framework", "kernel", "neuron" };
	char *p;
	size_t i;
	int ret;

	if (*want) {
		ret = tc_mkdir_p(want, 0755);
		if (ret)
			return tc_err_set(err, ret, "%s: %s", want, strerror(-ret));
		r->capture_dir = realpath(want, NULL);
		if (!r->capture_dir)
			return tc_err_set(err, -errno, "%s: %s", want, strerror(errno));
	} else {
		p = tc_xasprintf("%s/nx-capture.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(p)) {
			ret = tc_err_set(err, -errno, "%s: %s", p, strerror(errno));
			free(p);
			return ret;
		}
		r->capture_dir = p;
		r->temp_dir = true;
	}
	for (i = 0; i < TC_ARRAY_SIZE(subs); i++) {
		p = tc_xasprintf("%s/%s", r->capture_dir, subs[i]);
		ret = tc_mkdir_p(p, 0755);
		free(p);
		if (ret)
			return tc_err_set(err, ret, "%s/%s: %s", r->capture_dir, subs[i],
					  strerror(-ret));
	}
	return 0;
}

static void
cap_rm_rf(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	char *p;

	if (d) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			p = tc_xasprintf("%s/%s", path, de->d_name);
			cap_rm_rf(p);
			free(p);
		}
		closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

static pid_t
cap_spawn(struct cap_run *r, char **cmd)
{
	size_t i;
	json_t *v;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid != 0)
		return pid;
	/* The child: reset our handlers, set the variables, exec. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	json_array_foreach(r->plan.vars, i, v)
		setenv(json_string_value(json_object_get(v, "name")),
		       json_string_value(json_object_get(v, "value")), 1);
	unsetenv("NX_TOKEN");	/* the upload's secrets are not the workload's */
	unsetenv("NX_TOKEN_FILE");
	execvp(cmd[0], cmd);
	fprintf(stderr, "neuron-explorer capture: %s: %s\n", cmd[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

static int
cap_wait(pid_t pid, int *status)
{
	pid_t w;

	for (;;) {
		w = waitpid(pid, status, 0);
		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return -errno;
	}
}

static int
cap_add_file(struct cap_run *r, struct ntff_writer *w, int kind, const char *name,
	     const char *path, const char *layer)
{
	struct tc_err err = { 0 };
	struct stat st;
	int ret;

	if (stat(path, &st))
		return -errno;
	ret = ntff_writer_add_file(w, kind, name, path, cap_get_bool(r->cfg, "NX_COMPRESS"), &err);
	if (ret) {
		cap_warn(r, "%s: %s", name, err.msg);
		return ret;
	}
	json_array_append_new(r->sections, json_pack("{s:o, s:i, s:s, s:I}", "name",
						     tc_json_str(name), "kind",
						     kind, "layer", layer, "size",
						     (json_int_t)st.st_size));
	return 0;
}

/* Attach every file under @dir (recursively) as "@prefix/relative/path". */
static int
cap_attach_tree(struct cap_run *r, struct ntff_writer *w, const char *dir, const char *prefix,
		const char *layer)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st;
	char *p, *name;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..")))
			continue;
		p = tc_xasprintf("%s/%s", dir, de->d_name);
		name = tc_xasprintf("%s/%s", prefix, de->d_name);
		if (!lstat(p, &st) && S_ISDIR(st.st_mode))
			n += cap_attach_tree(r, w, p, name, layer);
		else if (S_ISREG(st.st_mode) &&
			 !cap_add_file(r, w, NTFF_SEC_ATTACHMENT, name, p, layer))
			n++;
		free(p);
		free(name);
	}
	closedir(d);
	return n;
}

/* Run the vendor's processing tool over the Neuron output; add *.pftrace. */
static int
cap_neuron_process(struct cap_run *r, struct ntff_writer *w, const char *ndir)
{
	const char *tool = cap_get(r->cfg, "NX_NEURON_PROFILE_TOOL");
	char *out = tc_xasprintf("%s/processed", r->capture_dir), *name, *p;
	pid_t pid;
	int status = 0, n = 0;
	DIR *d;
	struct dirent *de;

	tc_mkdir_p(out, 0755);
	pid = fork();
	if (pid == 0) {
		if (chdir(out))
			_exit(126);
		execl(tool, tool, "view", "-d", ndir, "--output-format", "perfetto",
		      (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || cap_wait(pid, &status) || !WIFEXITED(status) || WEXITSTATUS(status)) {
		cap_warn(r, "%s view -d %s --output-format perfetto failed (status %d): the raw "
			 "Neuron files are still attached", tool, ndir, status);
		goto out;
	}
	d = opendir(out);
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (l < 9 || strcmp(de->d_name + l - 8, ".pftrace"))
			continue;
		p = tc_xasprintf("%s/%s", out, de->d_name);
		name = tc_xasprintf("kernel/neuron/%s", de->d_name);
		if (!cap_add_file(r, w, NTFF_SEC_PERFETTO, name, p, "kernel"))
			n++;
		free(p);
		free(name);
	}
	if (d)
		closedir(d);
out:
	free(out);
	return n;
}

static bool
cap_nonempty(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && st.st_size > 0;
}

static json_t *
cap_load_json(const char *path)
{
	return json_load_file(path, 0, NULL);
}

/* framework/trace.json, then trace-PID.json of the other Python processes
 * (whose hook-PID.json reports go into the manifest's "children"). */
static int
cap_add_framework(struct cap_run *r, struct ntff_writer *w, json_t *layer)
{
	char *dir = tc_xasprintf("%s/framework", r->capture_dir), *p, *name;
	json_t *children = json_array(), *rep;
	struct dirent **list = NULL;
	int i, nl, n = 0;

	nl = scandir(dir, &list, NULL, alphasort);
	for (i = 0; i < nl; i++) {
		const char *f = list[i]->d_name;
		size_t l = strlen(f);

		p = tc_xasprintf("%s/%s", dir, f);
		if (!strncmp(f, "trace", 5) && l >= 10 && !strcmp(f + l - 5, ".json") &&
		    (f[5] == '.' || f[5] == '-') && cap_nonempty(p)) {
			name = tc_xasprintf("framework/%s", f);
			if (!cap_add_file(r, w, NTFF_SEC_JSON, name, p, "framework"))
				n++;
			free(name);
		} else if (!strncmp(f, "hook-", 5) && l > 10 && !strcmp(f + l - 5, ".json") &&
			   (rep = cap_load_json(p))) {
			json_array_append_new(children, rep);
		}
		free(p);
		free(list[i]);
	}
	free(list);
	if (json_array_size(children))
		json_object_set(layer, "children", children);
	json_decref(children);
	free(dir);
	return n;
}

static int
cap_write(struct cap_run *r, const char *out, struct tc_err *err)
{
	struct ntff_writer *w = NULL;
	char *p = NULL, *dump = NULL;
	json_t *layers = json_object_get(r->manifest, "layers"), *hook;
	int ret, n;

	ret = ntff_writer_open(&w, out, err);
	if (ret)
		return ret;

	/* Framework layer: the hook's trace and its own report. */
	p = tc_xasprintf("%s/framework/hook.json", r->capture_dir);
	hook = cap_load_json(p);
	free(p);
	if (hook) {
		json_object_set_new(json_object_get(layers, "framework"), "hook", hook);
		if (json_object_get(hook, "clock"))
			json_object_set(json_object_get(r->manifest, "clock"), "framework",
					json_object_get(hook, "clock"));
	} else if (r->plan.framework) {
		cap_warn(r, "framework: the torch hook left no report (was the workload a Python "
			 "process that imported torch?)");
	}
	n = cap_add_framework(r, w, json_object_get(layers, "framework"));
	json_object_set_new(json_object_get(layers, "framework"), "sections", json_integer(n));

	/* Kernel layer, CUPTI. */
	p = tc_xasprintf("%s/kernel/cupti.json", r->capture_dir);
	n = 0;
	if (cap_nonempty(p) && !cap_add_file(r, w, NTFF_SEC_JSON, "kernel/cupti.json", p, "kernel"))
		n = 1;
	free(p);
	p = tc_xasprintf("%s/kernel/cupti-stats.json", r->capture_dir);
	hook = cap_load_json(p);
	free(p);
	if (hook) {
		if (json_object_get(hook, "clock"))
			json_object_set(json_object_get(r->manifest, "clock"), "cupti",
					json_object_get(hook, "clock"));
		json_object_set_new(json_object_get(layers, "kernel"), "cupti", hook);
	}
	else if (!strcmp(r->plan.kernel, "cupti"))
		cap_warn(r, "kernel: the CUPTI collector wrote nothing "
			 "(did the workload use CUDA?)");

	/* Neuron runtime output: every file as an attachment, plus the vendor
	 * tool's Perfetto export when configured. */
	p = tc_xasprintf("%s/neuron", r->capture_dir);
	n += cap_attach_tree(r, w, p, "neuron", "kernel");
	if (n && !strcmp(r->plan.kernel, "neuron") && *cap_get(r->cfg, "NX_NEURON_PROFILE_TOOL"))
		n += cap_neuron_process(r, w, p);
	else if (!strcmp(r->plan.kernel, "neuron") && !n)
		cap_warn(r, "kernel: the Neuron runtime wrote nothing into %s", p);
	free(p);
	json_object_set_new(json_object_get(layers, "kernel"), "sections", json_integer(n));

	json_object_set(r->manifest, "sections", r->sections);
	json_object_set(r->manifest, "errors", r->errors);
	dump = json_dumps(r->manifest, JSON_INDENT(1));
	/* The capture folder describes itself too (kept with NX_KEEP_CAPTURE_DIR). */
	p = tc_xasprintf("%s/manifest.json", r->capture_dir);
	json_dump_file(r->manifest, p, JSON_INDENT(1));
	free(p);
	ret = ntff_writer_add(w, NTFF_SEC_MANIFEST, "manifest.json", dump, strlen(dump), false,
			      err);
	free(dump);
	if (ret) {
		ntff_writer_close(w, NULL);
		return ret;
	}
	return ntff_writer_close(w, err);
}

static int
cap_do_upload(struct cap_run *r, const char *out)
{
	struct cap_upload_opts o = { 0 };
	struct tc_err err = { 0 };
	char *token = NULL;
	json_t *resp = NULL;
	const char *url = cap_get(r->cfg, "NX_UPLOAD"), *id, *u;
	int ret;

	o.token = *cap_get(r->cfg, "NX_TOKEN") ? cap_get(r->cfg, "NX_TOKEN") : NULL;
	if (!o.token && *cap_get(r->cfg, "NX_TOKEN_FILE")) {
		token = cap_read_token_file(cap_get(r->cfg, "NX_TOKEN_FILE"), &err);
		if (!token) {
			fprintf(stderr, "neuron-explorer capture: upload: %s\n", err.msg);
			return -EINVAL;
		}
		o.token = token;
	}
	o.name = *cap_get(r->cfg, "NX_RUN_NAME") ? cap_get(r->cfg, "NX_RUN_NAME") : NULL;
	o.tags = *cap_get(r->cfg, "NX_TAGS") ? cap_get(r->cfg, "NX_TAGS") : NULL;
	o.retries = 4;
	o.progress = isatty(STDERR_FILENO);
	ret = cap_upload(out, url, &o, &resp, &err);
	if (ret) {
		fprintf(stderr, "neuron-explorer capture: upload to %s: %s\n", url, err.msg);
	} else {
		id = json_string_value(json_object_get(resp, "id"));
		u = json_string_value(json_object_get(resp, "url"));
		int ul = (int)(strlen(url) - (url[strlen(url) - 1] == '/'));

		fprintf(stderr, "neuron-explorer: uploaded %s as %s: %.*s%s\n"
			"neuron-explorer: view it at %.*s/#trace=%s\n", out, id ? id : "?", ul, url,
			u ? u : "", ul, url, id ? id : "");
		if (id && cap_get_bool(r->cfg, "NX_UPLOAD_WAIT")) {
			ret = cap_upload_wait(url, id, out, r->quiet, &err);
			if (ret)
				fprintf(stderr, "neuron-explorer capture: upload to %s: %s\n", url,
					err.msg);
		}
	}
	json_decref(resp);
	free(token);
	return ret;
}

int
cmd_capture(int argc, char **argv)
{
	struct cap_run r = { 0 };
	struct tc_err err = { 0 };
	struct sigaction sa, old[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	char **files = tc_xcalloc(argc, sizeof(char *));
	char **sets = tc_xcalloc(argc + 4, sizeof(char *));
	char **cmd = NULL, host[256] = "", *out = NULL, *setbuf[2] = { NULL, NULL };
	int nfiles = 0, nsets = 0, i, ret = 2, status = 0, exit_code;
	int64_t t0, t1;
	json_t *cmdline, *w, *clock;
	struct utsname un;
	bool planned = false, handlers = false;
	size_t k;
	pid_t pid;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--env") && i + 1 < argc) {
			files[nfiles++] = argv[++i];
		} else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
			sets[nsets++] = argv[++i];
		} else if (!strcmp(argv[i], "--upload") && i + 1 < argc) {
			sets[nsets++] = setbuf[0] = tc_xasprintf("NX_UPLOAD=%s", argv[++i]);
		} else if (!strcmp(argv[i], "--wait")) {
			sets[nsets++] = "NX_UPLOAD_WAIT=1";
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			sets[nsets++] = setbuf[1] = tc_xasprintf("NX_OUTPUT=%s", argv[++i]);
		} else if (!strcmp(argv[i], "-q")) {
			r.quiet = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cap_usage(stdout);
			ret = 0;
			goto out;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "neuron-explorer capture: unknown option '%s'\n", argv[i]);
			cap_usage(stderr);
			goto out;
		} else {
			break;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "neuron-explorer capture: no command to run\n");
		cap_usage(stderr);
		goto out;
	}
	cmd = argv + i;

	r.cfg = cap_config_new();
	r.errors = json_array();
	r.sections = json_array();
	if (cap_config_load(r.cfg, files, nfiles, environ, sets, nsets, &err)) {
		fprintf(stderr, "neuron-explorer capture: %s\n", err.msg);
		goto out;
	}
	if (cap_make_dirs(&r, &err)) {
		fprintf(stderr, "neuron-explorer capture: %s\n", err.msg);
		goto out;
	}
	if (cap_plan_build(&r.plan, r.cfg, r.capture_dir, &err)) {
		planned = true;
		fprintf(stderr, "neuron-explorer capture: %s\n", err.msg);
		goto out;
	}
	planned = true;
	json_array_foreach(r.cfg->warnings, k, w)
		cap_warn(&r, "%s", json_string_value(w));
	out = tc_xstrdup(cap_get(r.cfg, "NX_OUTPUT"));

	cmdline = json_array();
	for (i = 0; cmd[i]; i++)
		json_array_append_new(cmdline, tc_json_str(cmd[i]));
	gethostname(host, sizeof(host) - 1);
	uname(&un);
	clock = json_object();
	json_object_set_new(clock, "start", cap_clock_pair());
	/* paths, arguments and names are bytes: tc_json_str() keeps them UTF-8 */
	r.manifest = json_pack("{s:s, s:i, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:O, s:o}",
			       "format", "neuron-explorer-capture", "format_version", 1,
			       "tool_version", PACKAGE_VERSION, "host", tc_json_str(host),
			       "os", tc_json_str(un.release), "command", cmdline,
			       "config", cap_config_json(r.cfg), "capture_dir",
			       tc_json_str(r.capture_dir),
			       "clock", clock, "layers", r.plan.layers,
			       "variables", json_array());
	json_array_foreach(r.plan.vars, k, w)
		json_array_append_new(json_object_get(r.manifest, "variables"), cap_var_shown(w));
	json_object_set_new(r.manifest, "kernel_backend", json_string(r.plan.kernel));

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = cap_on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	handlers = true;

	t0 = tc_mono_ns();
	json_object_set_new(r.manifest, "start_ns", json_integer(tc_now_ns()));
	pid = cap_spawn(&r, cmd);
	if (pid < 0) {
		fprintf(stderr, "neuron-explorer capture: fork: %s\n", strerror(errno));
		goto out;
	}
	cap_child_pid = pid;
	if (cap_wait(pid, &status)) {
		fprintf(stderr, "neuron-explorer capture: waitpid: %s\n", strerror(errno));
		status = 0;
	}
	cap_child_pid = 0;
	t1 = tc_mono_ns();
	json_object_set_new(r.manifest, "end_ns", json_integer(tc_now_ns()));
	json_object_set_new(clock, "end", cap_clock_pair());
	json_object_set_new(r.manifest, "wall_ns", json_integer(t1 - t0));

	if (WIFSIGNALED(status)) {
		exit_code = 128 + WTERMSIG(status);
		json_object_set_new(r.manifest, "exit", json_pack("{s:i, s:s, s:i}", "status",
								  exit_code, "signal",
								  strsignal(WTERMSIG(status)),
								  "signo", WTERMSIG(status)));
	} else {
		exit_code = WEXITSTATUS(status);
		json_object_set_new(r.manifest, "exit", json_pack("{s:i}", "status", exit_code));
	}
	if (cap_last_signal)
		json_object_set_new(r.manifest, "forwarded_signal", json_integer(cap_last_signal));

	ret = exit_code;
	if (cap_write(&r, out, &err)) {
		fprintf(stderr, "neuron-explorer capture: %s: %s\n", out, err.msg);
		if (!ret)
			ret = 1;
		goto out;
	}
	if (!r.quiet)
		fprintf(stderr, "neuron-explorer: wrote %s (%zu section%s, workload exit status %d)\n",
			out, json_array_size(r.sections) + 1, tc_s((long long)json_array_size(r.sections) + 1),
			exit_code);
	if (*cap_get(r.cfg, "NX_UPLOAD") && cap_do_upload(&r, out) && !ret)
		ret = 1;
out:
	if (handlers)
		for (i = 0; i < 3; i++)
			sigaction(sigs[i], &old[i], NULL);
	if (r.capture_dir && (r.temp_dir && !(r.cfg && cap_get_bool(r.cfg, "NX_KEEP_CAPTURE_DIR"))))
		cap_rm_rf(r.capture_dir);
	else if (r.capture_dir && !r.quiet && r.temp_dir)
		fprintf(stderr, "neuron-explorer: capture files kept in %s\n", r.capture_dir);
	if (planned)
		cap_plan_free(&r.plan);
	cap_config_free(r.cfg);
	json_decref(r.manifest);
	json_decref(r.sections);
	json_decref(r.errors);
	free(r.capture_dir);
	free(out);
	free(setbuf[0]);
	free(setbuf[1]);
	free(files);
	free(sets);
	return ret;
}
