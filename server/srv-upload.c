/* SPDX-License-Identifier: MIT */
/*
 * server/srv-upload.c - POST /upload: a multipart form (field `trace`,
 * optional `name` and `tags`, parsed by libmicrohttpd's post processor) or a
 * raw body, streamed to a file under DATA/tmp while hashing it (OpenSSL EVP
 * sha256) and checking it: a gzip body is inflated on the fly (into a scratch
 * buffer, never kept) to catch truncated or corrupt streams, and the first
 * decompressed bytes go to ing_detect() to refuse what is not a trace.  The
 * file kept is exactly the bytes sent (gzip stays gzip; the readers detect it
 * by magic).  Over --max-upload: a Content-Length above the limit is answered
 * 413 before any byte is read; a chunked body is cut off when it passes the
 * limit (partial file removed at once, nothing more written) and answered
 * 413 when the client stops sending (or the connection is closed after
 * SRV_DISCARD_MAX more bytes).
 *
 * Durability: the 202 goes out only after the file is fsync'ed, moved into
 * DATA/raw by st_library_add_raw() and the catalog row is committed.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <libgen.h>
#include <openssl/evp.h>
#include <zlib.h>
#include "ingest/ingest.h"
#include "server/srv-int.h"

#define HEAD_MAX 4096		/* decompressed bytes given to ing_detect() */
#define NAME_MAX_LEN 256
#define TAGS_MAX_LEN 1024
#define SRV_DISCARD_MAX (64ULL << 20)	/* refused bytes read before closing */

struct srv_upload {
	struct srv *srv;
	int fd;
	char *tmp_path;		/* NULL once moved or removed */
	EVP_MD_CTX *md;
	uint64_t bytes;
	uint64_t discarded;	/* body bytes read after a refusal */
	bool counted;		/* holds an uploads_active slot */
	bool wait;
	bool multipart;
	bool ce_gzip;		/* Content-Encoding: gzip */
	struct MHD_PostProcessor *pp;
	bool got_trace, trace_open;
	struct tc_buf name, tags;
	char *filename;

	/* gzip check */
	int gz;			/* -1 undecided, 0 plain, 1 gzip */
	unsigned char magic[2];
	size_t nmagic;
	z_stream zs;
	bool z_init, z_end;	/* z_end: the last member ended cleanly */
	unsigned char head[HEAD_MAX];
	size_t head_len;

	/* the first failure; answered as soon as possible */
	unsigned fail_status;
	char fail_code[32];
	char fail_detail[400];
};

static void
up_fail(struct srv_upload *u, unsigned status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
up_fail(struct srv_upload *u, unsigned status, const char *code, const char *fmt, ...)
{
	va_list ap;

	if (u->fail_status)
		return;
	u->fail_status = status;
	snprintf(u->fail_code, sizeof(u->fail_code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(u->fail_detail, sizeof(u->fail_detail), fmt, ap);
	va_end(ap);
}

void
srv_upload_free(struct srv_upload *u)
{
	if (!u)
		return;
	if (u->pp)
		MHD_destroy_post_processor(u->pp);
	if (u->fd >= 0)
		close(u->fd);
	if (u->tmp_path) {
		unlink(u->tmp_path);
		free(u->tmp_path);
	}
	EVP_MD_CTX_free(u->md);
	if (u->z_init)
		inflateEnd(&u->zs);
	if (u->counted)
		atomic_fetch_sub(&u->srv->uploads_active, 1);
	tc_buf_free(&u->name);
	tc_buf_free(&u->tags);
	free(u->filename);
	free(u);
}

static void
head_add(struct srv_upload *u, const void *p, size_t n)
{
	size_t k = TC_MIN(n, HEAD_MAX - u->head_len);

	memcpy(u->head + u->head_len, p, k);
	u->head_len += k;
}

/* Inflate @n bytes into a scratch buffer to validate the stream. */
static void
gz_feed(struct srv_upload *u, const unsigned char *p, size_t n)
{
	unsigned char out[65536];

	u->zs.next_in = (unsigned char *)p;
	u->zs.avail_in = (uInt)n;
	while (u->zs.avail_in > 0 && !u->fail_status) {
		int zr;

		if (u->z_end) {
			/* another gzip member must follow */
			if (u->zs.avail_in >= 1 && u->zs.next_in[0] != 0x1f) {
				up_fail(u, 400, "bad_gzip", "data after the end of the gzip stream "
					"(byte %llu)", (unsigned long long)(u->zs.total_in));
				return;
			}
			inflateReset(&u->zs);
			u->z_end = false;
		}
		u->zs.next_out = out;
		u->zs.avail_out = sizeof(out);
		zr = inflate(&u->zs, Z_NO_FLUSH);
		head_add(u, out, sizeof(out) - u->zs.avail_out);
		if (zr == Z_STREAM_END) {
			u->z_end = true;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			up_fail(u, 400, "bad_gzip", "corrupt gzip stream near byte %llu: %s",
				(unsigned long long)u->bytes, u->zs.msg ? u->zs.msg : "bad data");
			return;
		} else if (zr == Z_BUF_ERROR && u->zs.avail_out != 0) {
			break;
		}
	}
}

static void
check_bytes(struct srv_upload *u, const unsigned char *p, size_t n)
{
	if (u->gz < 0) {
		while (n && u->nmagic < 2) {
			u->magic[u->nmagic++] = *p++;
			n--;
		}
		if (u->nmagic < 2)
			return;
		u->gz = u->magic[0] == 0x1f && u->magic[1] == 0x8b;
		if (u->gz) {
			if (inflateInit2(&u->zs, 16 + MAX_WBITS) != Z_OK) {
				up_fail(u, 500, "internal", "cannot start zlib");
				return;
			}
			u->z_init = true;
			gz_feed(u, u->magic, 2);
		} else {
			if (u->ce_gzip) {
				up_fail(u, 400, "bad_gzip", "Content-Encoding: gzip but the body "
					"is not gzip data");
				return;
			}
			head_add(u, u->magic, 2);
		}
	}
	if (!n)
		return;
	if (u->gz)
		gz_feed(u, p, n);
	else
		head_add(u, p, n);
}

/* Append trace bytes: size limit, disk, hash, checks. */
static void
up_write(struct srv_upload *u, const char *data, size_t n)
{
	int rc;

	if (u->fail_status || !n)
		return;
	if (u->bytes + n > u->srv->opts.max_upload) {
		up_fail(u, 413, "too_large", "the upload is larger than the limit of %llu bytes "
			"(--max-upload)", (unsigned long long)u->srv->opts.max_upload);
		return;
	}
	rc = tc_write_all(u->fd, data, n);
	if (rc < 0) {
		up_fail(u, rc == -ENOSPC ? 507 : 500, rc == -ENOSPC ? "no_space" : "internal",
			"cannot write the upload: %s", strerror(-rc));
		return;
	}
	EVP_DigestUpdate(u->md, data, n);
	u->bytes += n;
	check_bytes(u, (const unsigned char *)data, n);
}

static void
buf_add_limited(struct tc_buf *b, const char *data, size_t n, size_t max)
{
	if (b->len < max)
		tc_buf_add(b, data, TC_MIN(n, max - b->len));
}

static enum MHD_Result
post_iter(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
	  const char *content_type, const char *transfer_encoding, const char *data,
	  uint64_t off, size_t size)
{
	struct srv_upload *u = cls;

	if (!key)
		return MHD_YES;
	if (!strcmp(key, "trace")) {
		if (off == 0 && u->got_trace && !u->trace_open) {
			up_fail(u, 400, "bad_request", "more than one `trace` field");
			return MHD_NO;
		}
		if (!u->got_trace && filename && *filename)
			u->filename = tc_xstrndup(filename, NAME_MAX_LEN);
		u->got_trace = true;
		u->trace_open = true;
		up_write(u, data, size);
	} else {
		u->trace_open = false;
		/*
		 * a field comes in pieces (@off counts on); its first replaces
		 * ?name= or ?tags= (the form says it for this file) and an
		 * earlier field of the same key
		 */
		if (!strcmp(key, "name")) {
			if (!off)
				tc_buf_reset(&u->name);
			buf_add_limited(&u->name, data, size, NAME_MAX_LEN);
		} else if (!strcmp(key, "tags")) {
			if (!off)
				tc_buf_reset(&u->tags);
			buf_add_limited(&u->tags, data, size, TAGS_MAX_LEN);
		}
	}
	return u->fail_status ? MHD_NO : MHD_YES;
}

bool
srv_auth_ok(struct srv_req *r)
{
	const char *h, *tok = r->srv->token;
	size_t n, hn, i;
	unsigned char diff = 0;

	if (!tok)
		return true;
	h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization");
	if (!h || strncasecmp(h, "Bearer ", 7)) {
		srv_reply_error(r, 401, "unauthorized", "this server needs "
				"'Authorization: Bearer TOKEN' for uploads and deletes");
		return false;
	}
	h += 7;
	n = strlen(tok);
	hn = strlen(h);
	diff = hn != n;
	/* every byte of the token compared, none of the header's past its end */
	for (i = 0; i < n; i++)
		diff |= (unsigned char)tok[i] ^ (unsigned char)(i < hn ? h[i] : 0);
	if (diff) {
		srv_reply_error(r, 401, "unauthorized", "wrong token");
		return false;
	}
	return true;
}

/* Content types accepted as a raw trace body.  curl --data-binary sends
 * application/x-www-form-urlencoded by default, so that one is raw too. */
static bool
raw_type_ok(const char *ct)
{
	static const char *const ok[] = {
		"application/octet-stream", "application/json", "application/gzip",
		"application/x-gzip", "application/x-www-form-urlencoded",
		"application/x-protobuf", "application/protobuf", "application/vnd.neuron-explorer",
		"text/plain", "text/json",
	};

	if (!ct || !*ct)
		return true;
	for (size_t i = 0; i < TC_ARRAY_SIZE(ok); i++) {
		size_t n = strlen(ok[i]);

		if (!strncasecmp(ct, ok[i], n) && (ct[n] == 0 || ct[n] == ';' || ct[n] == ' '))
			return true;
	}
	return false;
}

static enum MHD_Result
up_begin(struct srv_req *r)
{
	struct srv *s = r->srv;
	struct srv_upload *u;
	const char *ct, *ce, *cl, *w;
	uint64_t clen;

	if (!srv_auth_ok(r))
		return MHD_YES;
	ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Type");
	ce = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Encoding");
	cl = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Length");
	if (ce && *ce && strcasecmp(ce, "identity") && strcasecmp(ce, "gzip"))
		return srv_reply_error(r, 415, "unsupported_encoding", "Content-Encoding '%.40s' "
				       "is not supported (use gzip or none)", ce);
	if (ct && !strncasecmp(ct, "multipart/form-data", 19)) {
		if (ce && !strcasecmp(ce, "gzip"))
			return srv_reply_error(r, 415, "unsupported_encoding", "a gzip-encoded "
					       "multipart body is not supported: gzip the file "
					       "itself, or send it as a raw body");
	} else if (!raw_type_ok(ct)) {
		return srv_reply_error(r, 415, "unsupported_type", "Content-Type '%.60s' is not "
				       "a trace upload: send multipart/form-data with a `trace` "
				       "field, or the file as the raw body", ct);
	}
	if (cl && !tc_parse_u64(cl, &clen) && clen > s->opts.max_upload) {
		atomic_fetch_add(&s->m.upload_rejected, 1);
		return srv_reply_error(r, 413, "too_large", "the upload (%llu bytes) is larger "
				       "than the limit of %llu bytes (--max-upload)",
				       (unsigned long long)clen,
				       (unsigned long long)s->opts.max_upload);
	}
	if (atomic_fetch_add(&s->uploads_active, 1) >= s->opts.max_uploads) {
		atomic_fetch_sub(&s->uploads_active, 1);
		atomic_fetch_add(&s->m.upload_rejected, 1);
		return srv_reply_error(r, 503, "busy", "too many uploads in progress (%d); retry "
				       "later", s->opts.max_uploads);
	}
	u = tc_xcalloc(1, sizeof(*u));
	u->srv = s;
	u->fd = -1;
	u->counted = true;
	u->gz = -1;
	tc_buf_init(&u->name);
	tc_buf_init(&u->tags);
	r->up = u;
	if (srv_queue_full(s)) {
		atomic_fetch_add(&s->m.upload_rejected, 1);
		return srv_reply_error(r, 503, "busy", "the ingest queue is full (%d); retry later",
				       s->opts.max_queue);
	}
	w = srv_arg(r, "wait");
	u->wait = w && (!strcmp(w, "1") || !strcmp(w, "true"));
	u->ce_gzip = ce && !strcasecmp(ce, "gzip");
	if ((w = srv_arg(r, "name")))
		buf_add_limited(&u->name, w, strlen(w), NAME_MAX_LEN);
	if ((w = srv_arg(r, "tags")))
		buf_add_limited(&u->tags, w, strlen(w), TAGS_MAX_LEN);
	pthread_mutex_lock(&s->lib_mu);
	u->tmp_path = st_library_tmp_path(s->lib, ".upload");
	pthread_mutex_unlock(&s->lib_mu);
	u->fd = open(u->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (u->fd < 0) {
		int e = errno;

		free(u->tmp_path);
		u->tmp_path = NULL;
		return srv_reply_error(r, 500, "internal", "cannot create the upload file: %s",
				       strerror(e));
	}
	u->md = EVP_MD_CTX_new();
	if (!u->md || EVP_DigestInit_ex(u->md, EVP_sha256(), NULL) != 1)
		return srv_reply_error(r, 500, "internal", "cannot start sha256");
	if (ct && !strncasecmp(ct, "multipart/form-data", 19)) {
		u->multipart = true;
		u->pp = MHD_create_post_processor(r->conn, 65536, post_iter, u);
		if (!u->pp)
			return srv_reply_error(r, 400, "bad_request", "malformed multipart "
					       "Content-Type (no boundary?)");
	}
	return MHD_YES;
}

/* Drop the partial file at once: a refused upload fills no disk. */
static void
up_drop_file(struct srv_upload *u)
{
	if (u->fd >= 0) {
		close(u->fd);
		u->fd = -1;
	}
	if (u->tmp_path) {
		unlink(u->tmp_path);
		free(u->tmp_path);
		u->tmp_path = NULL;
	}
}

static enum MHD_Result
up_fail_reply(struct srv_req *r)
{
	struct srv_upload *u = r->up;

	atomic_fetch_add(&r->srv->m.upload_rejected, 1);
	up_drop_file(u);
	return srv_reply_error(r, u->fail_status, u->fail_code, "%s", u->fail_detail);
}

static enum MHD_Result
up_finish(struct srv_req *r)
{
	struct srv *s = r->srv;
	struct srv_upload *u = r->up;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	char hex[65], id[ST_ID_LEN + 1], *rawp = NULL;
	const char *name;
	struct tc_err err = { 0 };
	json_t *j;
	int rc;

	if (u->pp) {
		if (MHD_destroy_post_processor(u->pp) != MHD_YES && !u->fail_status)
			up_fail(u, 400, "bad_request", "malformed or truncated multipart body");
		u->pp = NULL;
	}
	if (u->fail_status)
		return up_fail_reply(r);
	if (u->multipart && !u->got_trace) {
		up_fail(u, 400, "missing_field", "the multipart upload has no `trace` field "
			"(curl -F trace=@FILE)");
		return up_fail_reply(r);
	}
	if (u->bytes == 0) {
		up_fail(u, 400, "empty_upload", "the upload is empty");
		return up_fail_reply(r);
	}
	if (u->gz < 0)
		check_bytes(u, NULL, 0);
	if (u->gz < 0) {
		/* one byte: nothing reads that */
		up_fail(u, 415, "not_a_trace", "a %llu-byte upload is not a trace",
			(unsigned long long)u->bytes);
		return up_fail_reply(r);
	}
	if (u->gz && !u->z_end && !u->fail_status)
		up_fail(u, 400, "bad_gzip", "truncated gzip stream (%llu bytes received, the "
			"stream does not end)", (unsigned long long)u->bytes);
	if (!u->fail_status && ing_detect(u->head, u->head_len) == ING_FMT_UNKNOWN) {
		char why[160];

		ing_detect_why(u->head, u->head_len, why, sizeof(why));
		up_fail(u, 415, "not_a_trace", "the upload is not a trace this server reads "
			"(Chrome/Kineto JSON, Perfetto protobuf or .ntff, optionally gzip'd): %s",
			why);
	}
	if (u->fail_status)
		return up_fail_reply(r);

	if (fsync(u->fd) < 0 || close(u->fd) < 0) {
		u->fd = -1;
		return srv_reply_error(r, 500, "internal", "cannot sync the upload: %s",
				       strerror(errno));
	}
	u->fd = -1;
	EVP_DigestFinal_ex(u->md, md, &mdlen);
	for (unsigned i = 0; i < mdlen && i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[64] = 0;
	name = u->name.len ? u->name.data : u->filename;

	pthread_mutex_lock(&s->lib_mu);
	rc = st_library_add_raw(s->lib, u->tmp_path, true, hex, name,
				u->tags.len ? u->tags.data : NULL, id, &err);
	if (rc == 0) {
		rawp = st_library_raw_path(s->lib, hex);
		tc_fsync_dir(dirname(rawp));
	}
	pthread_mutex_unlock(&s->lib_mu);
	free(rawp);
	if (rc < 0)
		return srv_reply_errno(r, rc, err.msg);
	free(u->tmp_path);
	u->tmp_path = NULL;
	atomic_fetch_sub(&s->uploads_active, 1);
	u->counted = false;
	atomic_fetch_add(&s->m.uploads, 1);
	atomic_fetch_add(&s->m.upload_bytes, u->bytes);
	srv_queue_push(s, id, true);

	if (u->wait) {
		int code = 0;

		srv_queue_wait(s, id, tc_mono_ns() + (int64_t)SRV_WAIT_MAX_S * 1000000000LL);
		j = srv_trace_json(s, id, &code);
		if (j) {
			const char *st = json_string_value(json_object_get(j, "status"));

			if (st && !strcmp(st, "ready"))
				return srv_reply_json(r, 201, j);
			if (st && !strcmp(st, "failed")) {
				json_t *e = json_pack("{s:s, s:O, s:s}", "error", "ingest_failed",
						      "detail", json_object_get(j, "error"),
						      "id", id);

				json_decref(j);
				return srv_reply_json(r, 422, e);
			}
			json_decref(j);
		}
	}
	{
		char *url = tc_arena_alloc(&r->arena, 64);

		snprintf(url, 64, "/api/traces/%s", id);
		j = json_pack("{s:s, s:s, s:s, s:s, s:I}", "id", id, "status", "queued",
			      "url", url, "sha256", hex, "size", (json_int_t)u->bytes);
	}
	return srv_reply_json(r, 202, j);
}

enum MHD_Result
srv_upload(struct srv_req *r, const char *data, size_t *size)
{
	struct srv_upload *u;

	if (r->queued) {
		*size = 0;
		return MHD_YES;
	}
	if (!r->up) {
		if (!r->started) {
			r->started = true;
			return up_begin(r);
		}
		return MHD_NO;
	}
	u = r->up;
	if (*size) {
		/*
		 * libmicrohttpd 0.9.75 cannot queue an answer in the middle of a
		 * body, so a refused upload is read to its end without being
		 * stored (the file is already gone) and answered then; past
		 * SRV_DISCARD_MAX more bytes the connection is simply closed.
		 */
		if (u->fail_status) {
			u->discarded += *size;
			*size = 0;
			return u->discarded > SRV_DISCARD_MAX ? MHD_NO : MHD_YES;
		}
		if (u->multipart) {
			if (MHD_post_process(u->pp, data, *size) != MHD_YES && !u->fail_status)
				up_fail(u, 400, "bad_request", "malformed multipart body");
		} else {
			up_write(u, data, *size);
		}
		*size = 0;
		if (u->fail_status)
			up_drop_file(u);
		return MHD_YES;
	}
	return up_finish(r);
}
