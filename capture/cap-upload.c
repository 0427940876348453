/* SPDX-License-Identifier: MIT */
/*
 * capture/cap-upload.c - upload a trace to a neuron-explorer server with
 * libcurl (POST URL/upload, multipart field "trace"), with retries and
 * backoff on connection errors and 503, and a progress bar on a terminal;
 * and `neuron-explorer upload`, which with --wait follows the ingest
 * through the API until the trace is ready or failed.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>

#include "capture/cap-int.h"
#include "cli/cli-progress.h"
#include "cli/cmds.h"

static size_t
cap_up_body(char *p, size_t size, size_t n, void *ctx)
{
	tc_buf_add(ctx, p, size * n);
	return size * n;
}

/* What every request of ours sets on @h: the body into @body, errors into @errbuf. */
static void
cap_curl_setup(CURL *h, struct tc_buf *body, char *errbuf)
{
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cap_up_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "neuron-explorer/" PACKAGE_VERSION);
}

static int
cap_up_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		curl_off_t ulnow)
{
	int *last = ctx, pct, i, bar;

	if (ultotal <= 0)
		return 0;
	pct = (int)(ulnow * 100 / ultotal);
	if (pct == *last)
		return 0;
	*last = pct;
	bar = pct * 30 / 100;
	fprintf(stderr, "\rupload [");
	for (i = 0; i < 30; i++)
		fputc(i < bar ? '#' : ' ', stderr);
	fprintf(stderr, "] %3d%% %lld/%lld bytes", pct, (long long)ulnow, (long long)ultotal);
	return 0;
}

static bool
cap_up_retryable(CURLcode rc)
{
	return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
	       rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_SEND_ERROR ||
	       rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING;
}

static void
cap_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int
cap_upload(const char *path, const char *url, const struct cap_upload_opts *o, json_t **resp,
	   struct tc_err *err)
{
	CURL *h = NULL;
	curl_mime *mime = NULL;
	curl_mimepart *part;
	struct curl_slist *hdrs = NULL;
	struct tc_buf body;
	char *full = NULL, *auth = NULL, errbuf[CURL_ERROR_SIZE];
	long code = 0, delay = 250;
	int attempt, ret = 0, last = -1;
	size_t ul = strlen(url);
	CURLcode rc = CURLE_OK;

	tc_buf_init(&body);
	*resp = NULL;
	if (access(path, R_OK))
		return tc_err_set(err, -errno, "%s: %s", path, strerror(errno));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	full = tc_xasprintf("%.*s/upload", (int)(ul && url[ul - 1] == '/' ? ul - 1 : ul), url);
	if (o->token) {
		auth = tc_xasprintf("Authorization: Bearer %s", o->token);
		hdrs = curl_slist_append(hdrs, auth);
	}
	hdrs = curl_slist_append(hdrs, "Accept: application/json");
	for (attempt = 0; attempt <= o->retries; attempt++) {
		h = curl_easy_init();
		if (!h) {
			ret = tc_err_set(err, -ENOMEM, "curl_easy_init failed");
			goto out;
		}
		mime = curl_mime_init(h);
		part = curl_mime_addpart(mime);
		curl_mime_name(part, "trace");
		if (curl_mime_filedata(part, path) != CURLE_OK) {
			ret = tc_err_set(err, -EIO, "%s: cannot read", path);
			goto out;
		}
		if (o->name) {
			part = curl_mime_addpart(mime);
			curl_mime_name(part, "name");
			curl_mime_data(part, o->name, CURL_ZERO_TERMINATED);
		}
		if (o->tags) {
			part = curl_mime_addpart(mime);
			curl_mime_name(part, "tags");
			curl_mime_data(part, o->tags, CURL_ZERO_TERMINATED);
		}
		tc_buf_reset(&body);
		errbuf[0] = '\0';
		curl_easy_setopt(h, CURLOPT_URL, full);
		curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
		cap_curl_setup(h, &body, errbuf);
		if (o->progress) {
			curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
			curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, cap_up_progress);
			curl_easy_setopt(h, CURLOPT_XFERINFODATA, &last);
		}
		rc = curl_easy_perform(h);
		if (o->progress && last >= 0)
			fputc('\n', stderr);
		code = 0;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		curl_mime_free(mime);
		mime = NULL;
		curl_easy_cleanup(h);
		h = NULL;
		if ((rc != CURLE_OK && cap_up_retryable(rc)) || (rc == CURLE_OK && code == 503)) {
			if (attempt < o->retries) {
				const char *why = rc == CURLE_OK ? "HTTP 503" :
						  errbuf[0] ? errbuf : curl_easy_strerror(rc);

				if (!o->quiet)
					fprintf(stderr, "neuron-explorer: upload: %s; retrying in "
						"%ld ms (%d/%d)\n", why, delay, attempt + 1, o->retries);
				cap_sleep_ms(delay);
				delay *= 2;
				continue;
			}
		}
		break;
	}
	if (rc != CURLE_OK) {
		ret = tc_err_set(err, -ECONNREFUSED, "%s: %s", full,
				 errbuf[0] ? errbuf : curl_easy_strerror(rc));
		goto out;
	}
	if (code < 200 || code >= 300) {
		/* The server's error, verbatim. */
		fwrite(body.data, 1, body.len, stderr);
		if (body.len && body.data[body.len - 1] != '\n')
			fputc('\n', stderr);
		ret = tc_err_set(err, -EPROTO, "HTTP %ld", code);
		goto out;
	}
	*resp = json_loadb(body.data ? body.data : "", body.len, 0, NULL);
	if (!*resp)
		*resp = json_object();
out:
	if (mime)
		curl_mime_free(mime);
	if (h)
		curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	tc_buf_free(&body);
	free(full);
	free(auth);
	return ret;
}

#define CAP_WAIT_POLL_MS 200	/* --wait: between two looks at the trace */
#define CAP_WAIT_TRIES 5	/* --wait: failed looks in a row before giving up */

/* GET @url into a JSON value (*@out, owned by the caller); the HTTP status, or -errno. */
static long
cap_get_json(const char *url, json_t **out, struct tc_err *err)
{
	CURL *h = curl_easy_init();
	struct tc_buf body;
	char errbuf[CURL_ERROR_SIZE] = "";
	long code = 0;
	CURLcode rc;

	*out = NULL;
	if (!h)
		return tc_err_set(err, -ENOMEM, "curl_easy_init failed");
	tc_buf_init(&body);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	cap_curl_setup(h, &body, errbuf);
	rc = curl_easy_perform(h);
	if (rc != CURLE_OK) {
		code = tc_err_set(err, -ECONNREFUSED, "%s: %s", url,
				  errbuf[0] ? errbuf : curl_easy_strerror(rc));
	} else {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		*out = json_loadb(body.data ? body.data : "", body.len, 0, NULL);
	}
	curl_easy_cleanup(h);
	tc_buf_free(&body);
	return code;
}

/*
 * Follow trace @id on the server at @base until it is ready (0, the TRACE
 * object in *@trace) or failed (-EPROTO, its error in @err), showing its
 * phase as @g says.  A trace deleted meanwhile, or a server that cannot be
 * reached CAP_WAIT_TRIES times in a row, is an error too.
 */
static int
cap_wait_ready(const char *base, const char *id, struct cli_progress *g, json_t **trace,
	       struct tc_err *err)
{
	char *url = tc_xasprintf("%s/api/traces/%s", base, id);
	int misses = 0, ret;

	*trace = NULL;
	for (;;) {
		json_t *t = NULL;
		long code = cap_get_json(url, &t, err);
		const char *st = json_string_value(json_object_get(t, "status"));
		const char *phase = json_string_value(json_object_get(t, "phase"));

		if (code == 404) {
			json_decref(t);
			ret = tc_err_set(err, -ENOENT, "trace %s was deleted before its ingest ended",
					 id);
			break;
		}
		if (code < 200 || code >= 300 || !st) {
			json_decref(t);
			if (code >= 0)
				tc_err_set(err, -EPROTO, "%s: HTTP %ld", url, code);
			if (++misses >= CAP_WAIT_TRIES) {
				ret = -EPROTO;
				break;
			}
		} else if (!strcmp(st, "ready")) {
			*trace = t;
			ret = 0;
			break;
		} else if (!strcmp(st, "failed")) {
			const char *e = json_string_value(json_object_get(t, "error"));

			ret = tc_err_set(err, -EPROTO, "the server could not ingest it: %s",
					 e ? e : "no reason given");
			json_decref(t);
			break;
		} else {
			misses = 0;
			cli_progress_named(g, phase ? phase : st,
					   json_real_value(json_object_get(t, "progress")));
			json_decref(t);
		}
		cap_sleep_ms(CAP_WAIT_POLL_MS);
	}
	cli_progress_end(g);
	free(url);
	return ret;
}

int
cap_upload_wait(const char *url, const char *id, const char *label, bool quiet,
		struct tc_err *err)
{
	int ul = (int)(strlen(url) - (*url && url[strlen(url) - 1] == '/'));
	char *base = tc_xasprintf("%.*s", ul, url);
	struct cli_progress g;
	json_t *t = NULL;
	int ret;

	cli_progress_init(&g, label, quiet ? 0 : 1);
	ret = cap_wait_ready(base, id, &g, &t, err);
	if (!ret && !quiet) {
		long long ns = json_integer_value(json_object_get(t, "slices"));
		long long nu = json_integer_value(json_object_get(t, "units"));
		long long nf = json_integer_value(json_object_get(json_object_get(t, "flows"), "flow"));

		fprintf(stderr, "neuron-explorer: ready: %lld slice%s, %lld unit%s, %lld flow edge%s\n",
			ns, tc_s(ns), nu, tc_s(nu), nf, tc_s(nf));
	}
	json_decref(t);
	free(base);
	return ret;
}

static void
cap_upload_usage(FILE *f)
{
	fprintf(f,
		"usage: neuron-explorer upload FILE URL [--token T | --token-file F] [--name N]\n"
		"                              [--tags a,b] [--retries N] [--wait] [-q]\n"
		"POST FILE to URL/upload (multipart field \"trace\").  Prints the trace id and\n"
		"its URL; on an HTTP error prints the server's answer and exits 1.  --wait\n"
		"follows the ingest until the trace is ready (its phase on stderr: a line\n"
		"rewritten on a terminal, a line per phase elsewhere; none with -q) and exits 1\n"
		"when the server could not ingest it, saying why.\n");
}

int
cmd_upload(int argc, char **argv)
{
	struct cap_upload_opts o = { 0 };
	struct tc_err err = { 0 };
	const char *file = NULL, *url = NULL, *token_file = NULL, *id, *u;
	int ul;
	char *token = NULL;
	json_t *resp = NULL;
	bool wait = false;
	uint64_t n;
	int i, ret = 2;

	o.retries = 4;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--token") && i + 1 < argc) {
			o.token = argv[++i];
		} else if (!strcmp(argv[i], "--token-file") && i + 1 < argc) {
			token_file = argv[++i];
		} else if (!strcmp(argv[i], "--name") && i + 1 < argc) {
			o.name = argv[++i];
		} else if (!strcmp(argv[i], "--tags") && i + 1 < argc) {
			o.tags = argv[++i];
		} else if (!strcmp(argv[i], "--retries") && i + 1 < argc) {
			if (tc_parse_u64(argv[++i], &n) || n > 20) {
				fprintf(stderr, "neuron-explorer upload: --retries: '%s' is not 0..20\n",
					argv[i]);
				goto out;
			}
			o.retries = (int)n;
		} else if (!strcmp(argv[i], "-q")) {
			o.quiet = true;
		} else if (!strcmp(argv[i], "--wait")) {
			wait = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cap_upload_usage(stdout);
			ret = 0;
			goto out;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "neuron-explorer upload: unknown option '%s'\n", argv[i]);
			goto out;
		} else if (!file) {
			file = argv[i];
		} else if (!url) {
			url = argv[i];
		} else {
			fprintf(stderr, "neuron-explorer upload: extra argument '%s'\n", argv[i]);
			goto out;
		}
	}
	if (!url)
		url = getenv("NX_UPLOAD");
	if (!file || !url || !*url) {
		cap_upload_usage(stderr);
		goto out;
	}
	if (!o.token && !token_file && getenv("NX_TOKEN") && *getenv("NX_TOKEN"))
		o.token = getenv("NX_TOKEN");
	if (!o.token && !token_file && getenv("NX_TOKEN_FILE") && *getenv("NX_TOKEN_FILE"))
		token_file = getenv("NX_TOKEN_FILE");
	if (!o.token && token_file) {
		token = cap_read_token_file(token_file, &err);
		if (!token) {
			fprintf(stderr, "neuron-explorer upload: %s\n", err.msg);
			goto out;
		}
		o.token = token;
	}
	o.progress = !o.quiet && isatty(STDERR_FILENO);
	if (cap_upload(file, url, &o, &resp, &err)) {
		fprintf(stderr, "neuron-explorer upload: %s\n", err.msg);
		ret = 1;
		goto out;
	}
	id = json_string_value(json_object_get(resp, "id"));
	u = json_string_value(json_object_get(resp, "url"));
	printf("%s\n", id ? id : "");
	fflush(stdout);
	ul = (int)(strlen(url) - (url[strlen(url) - 1] == '/'));
	if (!o.quiet)
		fprintf(stderr, "neuron-explorer: uploaded %s: %.*s%s\n", file, ul, url, u ? u : "");
	if (wait && id && cap_upload_wait(url, id, file, o.quiet, &err) < 0) {
		fprintf(stderr, "neuron-explorer upload: %s\n", err.msg);
		ret = 1;
		goto out;
	}
	if (!o.quiet)
		fprintf(stderr, "neuron-explorer: view it at %.*s/#trace=%s\n", ul, url,
			id ? id : "");
	ret = 0;
out:
	json_decref(resp);
	free(token);
	return ret;
}
