/* SPDX-License-Identifier: MIT */
/*
 * server/srv-cmd.c - `neuron-explorer serve`: options (command line over
 * config file over defaults, one table), the data directory and crash
 * recovery, the ingest workers, the HTTP daemon, and shutdown on
 * SIGTERM/SIGINT.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stddef.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/cmds.h"
#include "server/srv-int.h"

#ifndef NX_SRC_WEB
#define NX_SRC_WEB ""
#endif

enum opt_type { OPT_STR, OPT_INT, OPT_U64, OPT_BOOL };

/* The options: each row is a long option and a config-file key. */
static const struct srv_opt_def {
	const char *name;
	enum opt_type type;
	size_t off;
	const char *help;
} srv_opt_defs[] = {
	{ "listen", OPT_STR, offsetof(struct srv_opts, listen),
	  "HOST:PORT to listen on (default 127.0.0.1:8080; port 0 picks a free one)" },
	{ "data", OPT_STR, offsetof(struct srv_opts, data),
	  "data directory (default $NX_DATA or ~/.local/share/neuron-explorer)" },
	{ "token-file", OPT_STR, offsetof(struct srv_opts, token_file),
	  "file holding the Bearer token required for upload and delete" },
	{ "web", OPT_STR, offsetof(struct srv_opts, web),
	  "directory of the web UI (default $NX_WEB_DIR, the installed or source web/)" },
	{ "workers", OPT_INT, offsetof(struct srv_opts, workers),
	  "ingest worker threads (default 2)" },
	{ "max-upload", OPT_U64, offsetof(struct srv_opts, max_upload),
	  "largest upload in bytes, suffixes k M G (default 4G)" },
	{ "max-uploads", OPT_INT, offsetof(struct srv_opts, max_uploads),
	  "concurrent uploads before 503 (default 8)" },
	{ "max-queue", OPT_INT, offsetof(struct srv_opts, max_queue),
	  "queued ingests before uploads get 503 (default 64)" },
	{ "max-connections", OPT_INT, offsetof(struct srv_opts, max_conns),
	  "concurrent connections (default 512)" },
	{ "cache-mb", OPT_INT, offsetof(struct srv_opts, cache_mb),
	  "MiB of encoded answers kept (default 64; 0 turns it off)" },
	{ "insecure", OPT_BOOL, offsetof(struct srv_opts, insecure),
	  "allow a non-loopback address without a token" },
};

static size_t
cache_opt_index(void)
{
	for (size_t i = 0; i < TC_ARRAY_SIZE(srv_opt_defs); i++)
		if (!strcmp(srv_opt_defs[i].name, "cache-mb"))
			return i;
	return 0;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: neuron-explorer serve [OPTIONS]\n\n"
		"Serve the trace library over HTTP: uploads, ingest, the JSON API and the web UI.\n"
		"The first line printed is the URL.\n\n"
		"  --config FILE          read KEY = VALUE lines (the option names below)\n");
	for (size_t i = 0; i < TC_ARRAY_SIZE(srv_opt_defs); i++)
		fprintf(f, "  --%-20s %s\n", srv_opt_defs[i].name, srv_opt_defs[i].help);
	fprintf(f, "  -h, --help             this text\n");
}

static int
parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 0:
		break;
	case 'k': case 'K':
		mul = 1ULL << 10;
		end++;
		break;
	case 'm': case 'M':
		mul = 1ULL << 20;
		end++;
		break;
	case 'g': case 'G':
		mul = 1ULL << 30;
		end++;
		break;
	default:
		return -EINVAL;
	}
	if (*end == 'i' || *end == 'B')
		end++;
	if (*end == 'B')
		end++;
	if (*end || (v && v > UINT64_MAX / mul))
		return -EINVAL;
	*out = v * mul;
	return 0;
}

/* Set option @name from text @val; @set marks what the CLI already set. */
static int
opt_set(struct srv_opts *o, bool *set, const char *name, const char *val, bool from_file,
	struct tc_err *err)
{
	for (size_t i = 0; i < TC_ARRAY_SIZE(srv_opt_defs); i++) {
		const struct srv_opt_def *d = &srv_opt_defs[i];
		char *p = (char *)o + d->off;
		int64_t iv;
		uint64_t uv;

		if (strcmp(d->name, name))
			continue;
		if (from_file && set[i])
			return 0;	/* the command line wins */
		set[i] = true;
		switch (d->type) {
		case OPT_STR:
			free(*(char **)p);
			*(char **)p = tc_xstrdup(val);
			break;
		case OPT_INT: {
			int lo = d->off == offsetof(struct srv_opts, cache_mb) ? 0 : 1;

			if (tc_parse_i64(val, &iv) < 0 || iv < lo || iv > 100000)
				return tc_err_set(err, -EINVAL, "--%s: '%s' is not a number in "
						  "%d..100000", name, val, lo);
			*(int *)p = (int)iv;
			break;
		}
		case OPT_U64:
			if (parse_size(val, &uv) < 0 || uv == 0)
				return tc_err_set(err, -EINVAL, "--%s: '%s' is not a size",
						  name, val);
			*(uint64_t *)p = uv;
			break;
		case OPT_BOOL:
			if (!val || !strcmp(val, "1") || !strcmp(val, "true") ||
			    !strcmp(val, "yes"))
				*(bool *)p = true;
			else if (!strcmp(val, "0") || !strcmp(val, "false") || !strcmp(val, "no"))
				*(bool *)p = false;
			else
				return tc_err_set(err, -EINVAL, "--%s: '%s' is not a boolean",
						  name, val);
			break;
		}
		return 0;
	}
	return tc_err_set(err, -EINVAL, "unknown option '%s'", name);
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

static int
config_load(struct srv_opts *o, bool *set, const char *path, struct tc_err *err)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int rc = 0, lineno = 0;

	if (!f)
		return tc_err_set(err, -errno, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *k = trim(line), *eq, *v;

		lineno++;
		if (!*k || *k == '#')
			continue;
		eq = strchr(k, '=');
		if (!eq) {
			rc = tc_err_set(err, -EINVAL, "%s:%d: expected KEY = VALUE", path, lineno);
			break;
		}
		*eq = 0;
		v = trim(eq + 1);
		k = trim(k);
		rc = opt_set(o, set, k, v, true, err);
		if (rc < 0) {
			struct tc_err e2 = *err;

			tc_err_clear(err);
			tc_err_set(err, rc, "%s:%d: %s", path, lineno, e2.msg);
			break;
		}
	}
	fclose(f);
	return rc;
}

static int
token_load(const char *path, char **out, struct tc_err *err)
{
	FILE *f = fopen(path, "r");
	char buf[1024], *t;
	size_t n;
	struct stat sb;

	if (!f)
		return tc_err_set(err, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fileno(f), &sb) == 0 && (sb.st_mode & 077))
		fprintf(stderr, "neuron-explorer: warning: %s is readable by others "
			"(chmod 600 it)\n", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	t = trim(buf);
	if (strlen(t) < 16 || strpbrk(t, " \t\r\n"))
		return tc_err_set(err, -EINVAL, "%s: the token must be one line of at least 16 "
				  "characters without spaces", path);
	*out = tc_xstrdup(t);
	return 0;
}

/* "HOST:PORT", "[V6]:PORT", "HOST" or ":PORT". */
static int
listen_parse(const char *s, char **host, uint16_t *port, struct tc_err *err)
{
	const char *colon;
	int64_t p = SRV_DEFAULT_PORT;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb)
			return tc_err_set(err, -EINVAL, "--listen: '%s': missing ']'", s);
		*host = tc_xstrndup(s + 1, (size_t)(rb - s - 1));
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if (rb[1] && !colon)
			return tc_err_set(err, -EINVAL, "--listen: '%s': expected [ADDR]:PORT", s);
	} else {
		colon = strrchr(s, ':');
		if (colon && strchr(s, ':') != colon)
			return tc_err_set(err, -EINVAL, "--listen: write IPv6 addresses as "
					  "[ADDR]:PORT");
		*host = colon ? tc_xstrndup(s, (size_t)(colon - s)) : tc_xstrdup(s);
	}
	if (!**host) {
		free(*host);
		*host = tc_xstrdup(SRV_DEFAULT_HOST);
	}
	if (!strcmp(*host, "localhost")) {
		free(*host);
		*host = tc_xstrdup("127.0.0.1");
	}
	if (colon && (tc_parse_i64(colon + 1, &p) < 0 || p < 0 || p > 65535))
		return tc_err_set(err, -EINVAL, "--listen: '%s': bad port", s);
	*port = (uint16_t)p;
	return 0;
}

static bool
host_loopback(const char *h)
{
	return !strncmp(h, "127.", 4) || !strcmp(h, "::1");
}

static bool
dir_has_index(const char *dir)
{
	char *p;
	bool ok;

	if (!dir || !*dir)
		return false;
	p = tc_xasprintf("%s/index.html", dir);
	ok = access(p, R_OK) == 0;
	free(p);
	return ok;
}

static char *
web_dir_pick(const char *opt)
{
	const char *env = getenv("NX_WEB_DIR");
	char *inst;

	if (opt)
		return tc_xstrdup(opt);
	if (env && *env)
		return tc_xstrdup(env);
	inst = tc_xasprintf("%s/web", NX_DATADIR);
	if (dir_has_index(inst))
		return inst;
	free(inst);
	if (dir_has_index(NX_SRC_WEB))
		return tc_xstrdup(NX_SRC_WEB);
	return NULL;
}

/* Re-queue what st_library_recover() left queued, oldest first. */
static int
requeue(struct srv *s, struct tc_err *err)
{
	sqlite3_stmt *st = NULL;
	int n = 0, rc;

	if (sqlite3_prepare_v2(st_library_catalog(s->lib), "SELECT id FROM traces WHERE status "
			       "IN ('queued', 'ingesting') ORDER BY created_ns, id", -1, &st, NULL))
		return tc_err_set(err, -EIO, "catalog: %s",
				  sqlite3_errmsg(st_library_catalog(s->lib)));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		srv_queue_push(s, (const char *)sqlite3_column_text(st, 0), true);
		n++;
	}
	if (rc != SQLITE_DONE)	/* the rest stay queued in the catalog, their files kept */
		fprintf(stderr, "neuron-explorer: catalog: cannot list every queued trace (%s); "
			"%d re-queued\n", sqlite3_errmsg(st_library_catalog(s->lib)), n);
	sqlite3_finalize(st);
	return n;
}

static void
opts_free(struct srv_opts *o)
{
	free(o->listen);
	free(o->data);
	free(o->token_file);
	free(o->web);
}

int
cmd_serve(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "listen", required_argument, NULL, 0 },
		{ "data", required_argument, NULL, 0 },
		{ "token-file", required_argument, NULL, 0 },
		{ "web", required_argument, NULL, 0 },
		{ "workers", required_argument, NULL, 0 },
		{ "max-upload", required_argument, NULL, 0 },
		{ "max-uploads", required_argument, NULL, 0 },
		{ "max-queue", required_argument, NULL, 0 },
		{ "max-connections", required_argument, NULL, 0 },
		{ "cache-mb", required_argument, NULL, 0 },
		{ "insecure", no_argument, NULL, 0 },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct srv srv;	/* one server per process */
	struct srv *s = &srv;
	bool set[TC_ARRAY_SIZE(srv_opt_defs)] = { 0 };
	const char *config = NULL;
	struct tc_err err = { 0 };
	char *host = NULL;
	uint16_t port = 0;
	sigset_t sigs;
	int c, li, rc = 0, sig = 0, nrec;
	bool started_http = false, started_q = false;

	memset(s, 0, sizeof(*s));
	srv_json_use_arenas();
	/*
	 * Request arenas come and go in MB-sized chunks: keep them on the heap
	 * and do not hand freed memory back at once, so a busy server does not
	 * spend its time in mmap/munmap page faults.
	 */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lopts, &li)) != -1) {
		switch (c) {
		case 0:
			if (opt_set(&s->opts, set, lopts[li].name, optarg, false, &err) < 0)
				goto fail;
			break;
		case 'c':
			config = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		tc_err_set(&err, -EINVAL, "unexpected argument '%s'", argv[optind]);
		goto fail;
	}
	if (config && config_load(&s->opts, set, config, &err) < 0)
		goto fail;
	if (!s->opts.listen)
		s->opts.listen = tc_xasprintf("%s:%d", SRV_DEFAULT_HOST, SRV_DEFAULT_PORT);
	if (!s->opts.data)
		s->opts.data = tc_xstrdup(cli_default_data_dir());
	if (!s->opts.workers)
		s->opts.workers = 2;
	if (!s->opts.max_upload)
		s->opts.max_upload = 4ULL << 30;
	if (!s->opts.max_uploads)
		s->opts.max_uploads = 8;
	if (!s->opts.max_queue)
		s->opts.max_queue = 64;
	if (!s->opts.max_conns)
		s->opts.max_conns = 512;
	if (!set[cache_opt_index()])
		s->opts.cache_mb = 64;
	if (listen_parse(s->opts.listen, &host, &port, &err) < 0)
		goto fail;
	if (s->opts.token_file && token_load(s->opts.token_file, &s->token, &err) < 0)
		goto fail;
	if (!host_loopback(host) && !s->token && !s->opts.insecure) {
		tc_err_set(&err, -EPERM, "refusing to listen on non-loopback address %s without "
			   "--token-file (or --insecure to allow anyone to upload and delete)",
			   host);
		goto fail;
	}
	s->web_dir = web_dir_pick(s->opts.web);

	pthread_mutex_init(&s->lib_mu, NULL);
	pthread_mutex_init(&s->q_mu, NULL);
	pthread_cond_init(&s->q_cv, NULL);
	pthread_cond_init(&s->done_cv, NULL);
	srv_pool_init(&s->pool);
	srv_cache_init(&s->cache, (size_t)s->opts.cache_mb << 20);
	s->started_ns = tc_now_ns();

	rc = st_library_open(&s->lib, s->opts.data, &err);
	if (rc < 0)
		goto fail;
	sqlite3_busy_timeout(st_library_catalog(s->lib), 10000);
	s->catalog_path = tc_xasprintf("%s/catalog.db", st_library_dir(s->lib));
	nrec = st_library_recover(s->lib, &err);
	if (nrec < 0)
		goto fail;
	nrec = requeue(s, &err);
	if (nrec < 0)
		goto fail;

	/* Signals go to this thread only: block them before any thread starts. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (srv_queue_start(s, &err) < 0)
		goto fail;
	started_q = true;
	if (srv_http_start(s, host, port, &err) < 0)
		goto fail;
	started_http = true;

	if (strchr(host, ':'))
		printf("neuron-explorer: serving http://[%s]:%u/\n", host, s->port);
	else
		printf("neuron-explorer: serving http://%s:%u/\n", host, s->port);
	fflush(stdout);
	fprintf(stderr, "neuron-explorer: data %s, %d worker(s), %d trace(s) to ingest, web %s%s\n",
		st_library_dir(s->lib), s->opts.workers, nrec, s->web_dir ? s->web_dir : "(none)",
		s->token ? ", token required for upload/delete" : "");

	for (;;) {
		if (sigwait(&sigs, &sig) != 0)
			continue;
		if (sig == SIGTERM || sig == SIGINT)
			break;
	}
	fprintf(stderr, "neuron-explorer: %s: stopping (ingests in flight stop; they and the "
		"queued ones resume at the next start)\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	rc = 0;
	goto out;

fail:
	fprintf(stderr, "neuron-explorer: serve: %s\n", err.msg[0] ? err.msg : strerror(-rc));
	rc = 1;
out:
	if (started_http)
		srv_http_quiesce(s);
	if (started_q)
		srv_queue_stop(s);	/* wakes ?wait=1 requests too */
	if (started_http)
		srv_http_stop(s);
	if (started_q)
		srv_queue_free(s);
	if (s->lib) {
		srv_pool_destroy(&s->pool);
		srv_cache_destroy(&s->cache);
		st_library_close(s->lib);
	}
	free(s->catalog_path);
	free(s->token);
	free(s->web_dir);
	free(host);
	opts_free(&s->opts);
	return rc;
}
