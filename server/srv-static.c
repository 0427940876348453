/* SPDX-License-Identifier: MIT */
/*
 * server/srv-static.c - the web UI's static files from the --web directory.
 * Only plain relative paths of [A-Za-z0-9._-/] with no empty, "." or ".."
 * segment reach the file system; symlinks are not followed out of it
 * (O_NOFOLLOW on the last component, and no segment may start with a dot).
 * "/" serves index.html.  HTML is revalidated on every load; other assets are
 * cached for an hour.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "server/srv-int.h"

static const struct {
	const char *ext, *type;
} srv_types[] = {
	{ ".html", "text/html; charset=utf-8" },
	{ ".js", "text/javascript; charset=utf-8" },
	{ ".mjs", "text/javascript; charset=utf-8" },
	{ ".css", "text/css; charset=utf-8" },
	{ ".json", "application/json; charset=utf-8" },
	{ ".map", "application/json; charset=utf-8" },
	{ ".svg", "image/svg+xml" },
	{ ".png", "image/png" },
	{ ".ico", "image/x-icon" },
	{ ".woff2", "font/woff2" },
	{ ".wasm", "application/wasm" },
	{ ".txt", "text/plain; charset=utf-8" },
};

static bool
path_safe(const char *p)
{
	const char *seg = p;

	if (!*p || strlen(p) > 200)
		return false;
	for (const char *q = p;; q++) {
		if (*q == '/' || *q == 0) {
			size_t n = (size_t)(q - seg);

			if (n == 0 || seg[0] == '.')	/* "", ".", "..", dot files */
				return false;
			if (*q == 0)
				break;
			seg = q + 1;
			continue;
		}
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
		      (*q >= '0' && *q <= '9') || *q == '.' || *q == '-' || *q == '_'))
			return false;
	}
	return true;
}

enum MHD_Result
srv_static(struct srv_req *r, const char *url)
{
	const char *rel = url[0] == '/' ? url + 1 : url, *type = "application/octet-stream";
	struct MHD_Response *resp;
	struct stat sb;
	char *path;
	size_t n;
	int fd;

	if (!r->srv->web_dir)
		return srv_reply_error(r, 404, "not_found", "no web UI is configured (--web DIR)");
	if (!*rel)
		rel = "index.html";
	if (!path_safe(rel))
		return srv_reply_error(r, 404, "not_found", "no such file");
	path = tc_xasprintf("%s/%s", r->srv->web_dir, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(path);
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		if (fd >= 0)
			close(fd);
		return srv_reply_error(r, 404, "not_found", "no such file");
	}
	n = strlen(rel);
	for (size_t i = 0; i < TC_ARRAY_SIZE(srv_types); i++) {
		size_t e = strlen(srv_types[i].ext);

		if (n > e && !strcmp(rel + n - e, srv_types[i].ext)) {
			type = srv_types[i].type;
			break;
		}
	}
	resp = MHD_create_response_from_fd((uint64_t)sb.st_size, fd);
	if (!resp) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", type);
	if (!strncmp(type, "text/html", 9)) {
		MHD_add_response_header(resp, "Cache-Control", "no-cache");
		MHD_add_response_header(resp, "Content-Security-Policy",
					"default-src 'self'; img-src 'self' data:; "
					"style-src 'self' 'unsafe-inline'; object-src 'none'; "
					"base-uri 'none'; frame-ancestors 'none'");
		MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	} else {
		MHD_add_response_header(resp, "Cache-Control", "public, max-age=3600");
	}
	return srv_reply_response(r, 200, resp);
}
