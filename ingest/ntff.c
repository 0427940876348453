/* SPDX-License-Identifier: MIT */
/*
 * ingest/ntff.c - the .ntff run container: writer (capture agent, convert)
 * and reader (ingest, `ntff ls|cat|verify`).  The byte layout is specified
 * in schemas/ntff.md; keep the two in step.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include "ingest/ntff.h"

const unsigned char ntff_magic[NTFF_MAGIC_LEN] = { 0x8a, 'N', 'T', 'F', '\r', '\n', 0x1a, '\n' };
static const unsigned char ntff_sec_magic[4] = { 'N', 'T', 'S', 'C' };

#define NTFF_FILE_HDR 16
#define NTFF_SEC_HDR 40
#define NTFF_CHUNK (256u << 10)

/* ---- little-endian helpers ---- */

static void
put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void
put32(unsigned char *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void
put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t
get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t
get32(const unsigned char *p)
{
	return get16(p) | ((uint32_t)get16(p + 2) << 16);
}

static uint64_t
get64(const unsigned char *p)
{
	return get32(p) | ((uint64_t)get32(p + 4) << 32);
}

/* crc32 over more than 4 GiB in uInt-sized steps */
static uint32_t
ntff_crc(uint32_t crc, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n) {
		uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;

		crc = (uint32_t)crc32(crc, b, k);
		b += k;
		n -= k;
	}
	return crc;
}

bool
ntff_is_ntff(const unsigned char *head, size_t len)
{
	return len >= NTFF_MAGIC_LEN && !memcmp(head, ntff_magic, NTFF_MAGIC_LEN);
}

const char *
ntff_kind_name(int kind)
{
	switch (kind) {
	case NTFF_SEC_MANIFEST:
		return "manifest";
	case NTFF_SEC_PERFETTO:
		return "perfetto";
	case NTFF_SEC_JSON:
		return "json";
	case NTFF_SEC_ATTACHMENT:
		return "attachment";
	}
	return "unknown";
}

int
ntff_kind_parse(const char *s)
{
	int k;

	for (k = NTFF_SEC_MANIFEST; k <= NTFF_SEC_ATTACHMENT; k++)
		if (!strcmp(s, ntff_kind_name(k)))
			return k;
	return -1;
}

const char *
ntff_status_name(int status)
{
	switch (status) {
	case NTFF_ST_OK:
		return "ok";
	case NTFF_ST_UNCHECKED:
		return "unchecked";
	case NTFF_ST_BAD_CRC:
		return "bad-crc";
	case NTFF_ST_TRUNCATED:
		return "truncated";
	case NTFF_ST_INCOMPLETE:
		return "incomplete";
	case NTFF_ST_BAD_DATA:
		return "bad-data";
	}
	return "?";
}

/* ---- writer ---- */

struct ntff_writer {
	FILE *f;
	char *path;
	bool failed;
};

static int
ntff_werr(struct ntff_writer *w, struct tc_err *err, const char *what)
{
	int code = errno ? -errno : -EIO;

	w->failed = true;
	return tc_err_set(err, code, "%s: %s: %s", w->path, what, strerror(-code));
}

int
ntff_writer_open(struct ntff_writer **wp, const char *path, struct tc_err *err)
{
	struct ntff_writer *w;
	unsigned char hdr[NTFF_FILE_HDR] = { 0 };
	FILE *f;

	*wp = NULL;
	f = fopen(path, "wb");
	if (!f)
		return tc_err_set(err, -errno, "%s: %s", path, strerror(errno));
	w = tc_xcalloc(1, sizeof(*w));
	w->f = f;
	w->path = tc_xstrdup(path);
	memcpy(hdr, ntff_magic, NTFF_MAGIC_LEN);
	put16(hdr + 8, NTFF_VERSION_MAJOR);
	put16(hdr + 10, NTFF_VERSION_MINOR);
	put32(hdr + 12, 0);
	if (fwrite(hdr, 1, sizeof(hdr), f) != sizeof(hdr) || fflush(f)) {
		int rc = ntff_werr(w, err, "write");

		fclose(f);
		tc_remove_partial(path);
		free(w->path);
		free(w);
		return rc;
	}
	*wp = w;
	return 0;
}

static void
ntff_sec_header(unsigned char *h, int kind, unsigned flags, size_t name_len, uint64_t stored,
		uint64_t raw, uint32_t crc, const char *name)
{
	memcpy(h, ntff_sec_magic, 4);
	put16(h + 4, (uint16_t)kind);
	put16(h + 6, (uint16_t)flags);
	put32(h + 8, (uint32_t)name_len);
	put64(h + 12, stored);
	put64(h + 20, raw);
	put32(h + 28, crc);
	put32(h + 32, 0);	/* reserved */
	put32(h + 36, ntff_crc(ntff_crc(0, h, 36), name, name_len));
}

static int
ntff_check_args(struct ntff_writer *w, int kind, const char *name, struct tc_err *err)
{
	if (!w || w->failed)
		return tc_err_set(err, -EIO, "%s: writer already failed", w ? w->path : "ntff");
	if (kind < 1 || kind > 0xffff)
		return tc_err_set(err, -EINVAL, "%s: bad section kind %d", w->path, kind);
	if (!name || !*name || strlen(name) > NTFF_MAX_NAME)
		return tc_err_set(err, -EINVAL, "%s: section name empty or longer than %d bytes",
				  w->path, NTFF_MAX_NAME);
	return 0;
}

int
ntff_writer_add(struct ntff_writer *w, int kind, const char *name, const void *data,
		size_t len, bool compress, struct tc_err *err)
{
	unsigned char h[NTFF_SEC_HDR];
	const void *payload = data;
	unsigned char *z = NULL;
	uLongf zlen = 0;
	size_t stored = len, nlen;
	int ret;

	ret = ntff_check_args(w, kind, name, err);
	if (ret < 0)
		return ret;
	nlen = strlen(name);
	if (compress) {
		zlen = compressBound((uLong)len);
		z = tc_xmalloc(zlen);
		if (compress2(z, &zlen, data, (uLong)len, 6) != Z_OK) {
			free(z);
			return tc_err_set(err, -ENOMEM, "%s: zlib compress failed", w->path);
		}
		payload = z;
		stored = zlen;
	}
	ntff_sec_header(h, kind, compress ? NTFF_F_ZLIB : 0, nlen, stored, len,
			ntff_crc(0, payload, stored), name);
	errno = 0;
	if (fwrite(h, 1, sizeof(h), w->f) != sizeof(h) || fwrite(name, 1, nlen, w->f) != nlen ||
	    (stored && fwrite(payload, 1, stored, w->f) != stored) || fflush(w->f))
		ret = ntff_werr(w, err, "write");
	free(z);
	return ret;
}

int
ntff_writer_add_file(struct ntff_writer *w, int kind, const char *name, const char *path,
		     bool compress, struct tc_err *err)
{
	unsigned char h[NTFF_SEC_HDR];
	unsigned char *in = NULL, *out = NULL;
	uint64_t raw = 0, stored = 0;
	uint32_t crc = 0;
	z_stream zs;
	bool zinit = false;
	long hdr_pos;
	size_t nlen, n;
	FILE *f;
	int ret;

	ret = ntff_check_args(w, kind, name, err);
	if (ret < 0)
		return ret;
	f = fopen(path, "rb");
	if (!f)
		return tc_err_set(err, -errno, "%s: %s", path, strerror(errno));
	nlen = strlen(name);
	/* A header with all-ones lengths marks the section incomplete until patched. */
	hdr_pos = ftell(w->f);
	ntff_sec_header(h, kind, compress ? NTFF_F_ZLIB : 0, nlen, UINT64_MAX, UINT64_MAX, 0, name);
	errno = 0;
	if (hdr_pos < 0 || fwrite(h, 1, sizeof(h), w->f) != sizeof(h) ||
	    fwrite(name, 1, nlen, w->f) != nlen) {
		ret = ntff_werr(w, err, "write");
		goto out;
	}
	in = tc_xmalloc(NTFF_CHUNK);
	out = tc_xmalloc(NTFF_CHUNK);
	if (compress) {
		memset(&zs, 0, sizeof(zs));
		if (deflateInit(&zs, 6) != Z_OK) {
			ret = tc_err_set(err, -ENOMEM, "%s: zlib init failed", w->path);
			goto out;
		}
		zinit = true;
	}
	for (;;) {
		n = fread(in, 1, NTFF_CHUNK, f);
		if (n == 0 && ferror(f)) {
			ret = tc_err_set(err, -EIO, "%s: read error", path);
			goto out;
		}
		raw += n;
		if (!compress) {
			if (!n)
				break;
			crc = ntff_crc(crc, in, n);
			stored += n;
			if (fwrite(in, 1, n, w->f) != n) {
				ret = ntff_werr(w, err, "write");
				goto out;
			}
			continue;
		}
		zs.next_in = in;
		zs.avail_in = (uInt)n;
		do {
			size_t have;

			zs.next_out = out;
			zs.avail_out = NTFF_CHUNK;
			deflate(&zs, n ? Z_NO_FLUSH : Z_FINISH);
			have = NTFF_CHUNK - zs.avail_out;
			crc = ntff_crc(crc, out, have);
			stored += have;
			if (have && fwrite(out, 1, have, w->f) != have) {
				ret = ntff_werr(w, err, "write");
				goto out;
			}
		} while (zs.avail_out == 0);
		if (!n)
			break;
	}
	/* patch the header now that the lengths and the CRC are known */
	ntff_sec_header(h, kind, compress ? NTFF_F_ZLIB : 0, nlen, stored, raw, crc, name);
	if (fflush(w->f) || fseek(w->f, hdr_pos, SEEK_SET) || fwrite(h, 1, sizeof(h), w->f) != sizeof(h) ||
	    fseek(w->f, 0, SEEK_END) || fflush(w->f))
		ret = ntff_werr(w, err, "write");
out:
	if (zinit)
		deflateEnd(&zs);
	free(in);
	free(out);
	fclose(f);
	return ret;
}

int
ntff_writer_close(struct ntff_writer *w, struct tc_err *err)
{
	int ret = 0;

	if (!w)
		return 0;
	errno = 0;
	if (fflush(w->f) || fsync(fileno(w->f)))
		ret = ntff_werr(w, err, "flush");
	if (fclose(w->f) && !ret)
		ret = tc_err_set(err, -errno, "%s: close: %s", w->path, strerror(errno));
	free(w->path);
	free(w);
	return ret;
}

/* ---- reader ---- */

struct ntff_reader {
	FILE *f;
	char *path;
	uint64_t size;
	unsigned version_major, version_minor;
	struct ntff_section *secs;
	size_t n, cap;
	char damage[300];	/* why the scan stopped early, "" when it reached EOF */
	bool damage_listed;	/* it stopped at the last listed section (incomplete, truncated) */
};

static struct ntff_section *
ntff_push(struct ntff_reader *r)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->secs = tc_xrealloc(r->secs, r->cap * sizeof(*r->secs));
	}
	memset(&r->secs[r->n], 0, sizeof(r->secs[0]));
	return &r->secs[r->n++];
}

int
ntff_open(struct ntff_reader **rp, const char *path, struct tc_err *err)
{
	struct ntff_reader *r;
	unsigned char h[NTFF_SEC_HDR];
	uint64_t off;
	int ret = 0;

	*rp = NULL;
	r = tc_xcalloc(1, sizeof(*r));
	r->path = tc_xstrdup(path);
	r->f = fopen(path, "rb");
	if (!r->f) {
		ret = tc_err_set(err, -errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (fseeko(r->f, 0, SEEK_END) || (off = (uint64_t)ftello(r->f), fseeko(r->f, 0, SEEK_SET))) {
		ret = tc_err_set(err, -errno, "%s: seek: %s", path, strerror(errno));
		goto out;
	}
	r->size = off;
	if (fread(h, 1, NTFF_FILE_HDR, r->f) != NTFF_FILE_HDR || !ntff_is_ntff(h, NTFF_FILE_HDR)) {
		ret = tc_err_set(err, -EINVAL, "%s: not an .ntff file (bad magic at byte 0)", path);
		goto out;
	}
	r->version_major = get16(h + 8);
	r->version_minor = get16(h + 10);
	if (r->version_major != NTFF_VERSION_MAJOR) {
		ret = tc_err_set(err, -ENOTSUP, "%s: .ntff version %u.%u is not supported (this "
				 "build reads %d.x)", path, r->version_major, r->version_minor,
				 NTFF_VERSION_MAJOR);
		goto out;
	}
	off = NTFF_FILE_HDR;
	while (off < r->size) {
		struct ntff_section *s;
		uint32_t nlen;
		size_t got;

		if (fseeko(r->f, (off_t)off, SEEK_SET))
			break;
		got = fread(h, 1, sizeof(h), r->f);
		if (got < sizeof(h)) {
			snprintf(r->damage, sizeof(r->damage), "truncated section header at byte %"
				 PRIu64 " (%zu of %d bytes)", off, got, NTFF_SEC_HDR);
			break;
		}
		if (memcmp(h, ntff_sec_magic, 4)) {
			snprintf(r->damage, sizeof(r->damage), "corrupt section header at byte %"
				 PRIu64 " (bad section magic)", off);
			break;
		}
		nlen = get32(h + 8);
		if (nlen == 0 || nlen > NTFF_MAX_NAME) {
			snprintf(r->damage, sizeof(r->damage), "corrupt section header at byte %"
				 PRIu64 " (name length %u)", off, nlen);
			break;
		}
		s = ntff_push(r);
		s->offset = off;
		s->kind = get16(h + 4);
		s->flags = get16(h + 6);
		s->stored_len = get64(h + 12);
		s->raw_len = get64(h + 20);
		s->crc = get32(h + 28);
		s->name = tc_xcalloc(1, nlen + 1);
		s->data_offset = off + NTFF_SEC_HDR + nlen;
		s->status = NTFF_ST_UNCHECKED;
		if (fread(s->name, 1, nlen, r->f) != nlen) {
			snprintf(r->damage, sizeof(r->damage), "truncated section name at byte %"
				 PRIu64, off);
			r->n--;
			free(s->name);
			break;
		}
		if (ntff_crc(ntff_crc(0, h, 36), s->name, nlen) != get32(h + 36)) {
			snprintf(r->damage, sizeof(r->damage), "corrupt section header at byte %"
				 PRIu64 " (header CRC mismatch)", off);
			r->n--;
			free(s->name);
			break;
		}
		if (s->stored_len == UINT64_MAX) {
			s->status = NTFF_ST_INCOMPLETE;
			r->damage_listed = true;
			snprintf(r->damage, sizeof(r->damage), "section \"%s\" at byte %" PRIu64
				 " was never completed (writer stopped)", s->name, off);
			break;
		}
		if (s->data_offset + s->stored_len > r->size) {
			s->status = NTFF_ST_TRUNCATED;
			r->damage_listed = true;
			snprintf(r->damage, sizeof(r->damage), "section \"%s\" at byte %" PRIu64
				 " is truncated: %" PRIu64 " payload bytes announced, %" PRIu64
				 " present", s->name, off, s->stored_len, r->size - s->data_offset);
			break;
		}
		off = s->data_offset + s->stored_len;
	}
out:
	if (ret < 0) {
		ntff_close(r);
		return ret;
	}
	*rp = r;
	return 0;
}

void
ntff_close(struct ntff_reader *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		free(r->secs[i].name);
	free(r->secs);
	if (r->f)
		fclose(r->f);
	free(r->path);
	free(r);
}

size_t
ntff_count(const struct ntff_reader *r)
{
	return r->n;
}

const struct ntff_section *
ntff_section(const struct ntff_reader *r, size_t i)
{
	return i < r->n ? &r->secs[i] : NULL;
}

const char *
ntff_damage(const struct ntff_reader *r)
{
	return r->damage[0] ? r->damage : NULL;
}

bool
ntff_damage_listed(const struct ntff_reader *r)
{
	return r->damage[0] && r->damage_listed;
}

void
ntff_version(const struct ntff_reader *r, unsigned *major, unsigned *minor)
{
	*major = r->version_major;
	*minor = r->version_minor;
}

int
ntff_find(const struct ntff_reader *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (!strcmp(r->secs[i].name, name))
			return (int)i;
	return -1;
}

/*
 * Stream section @i through @sink (raw payload when @raw, else inflated),
 * checking the CRC and the raw length on the way.
 */
static int
ntff_stream(struct ntff_reader *r, size_t i, bool raw,
	    int (*sink)(void *ctx, const void *p, size_t n), void *ctx, struct tc_err *err)
{
	struct ntff_section *s = &r->secs[i];
	unsigned char *in = NULL, *out = NULL;
	uint64_t left = s->stored_len, rawn = 0;
	uint32_t crc = 0;
	bool inflating = !raw && (s->flags & NTFF_F_ZLIB), zbad = false;
	z_stream zs;
	int ret = 0, zr = Z_OK;

	if (s->status == NTFF_ST_INCOMPLETE || s->status == NTFF_ST_TRUNCATED)
		return tc_err_set(err, -EBADMSG, "%s: section \"%s\" at byte %" PRIu64 " is %s",
				  r->path, s->name, s->offset, ntff_status_name(s->status));
	if (fseeko(r->f, (off_t)s->data_offset, SEEK_SET))
		return tc_err_set(err, -errno, "%s: seek: %s", r->path, strerror(errno));
	memset(&zs, 0, sizeof(zs));
	if (inflating && inflateInit(&zs) != Z_OK)
		return tc_err_set(err, -ENOMEM, "%s: zlib init failed", r->path);
	in = tc_xmalloc(NTFF_CHUNK);
	out = tc_xmalloc(NTFF_CHUNK);
	while (left) {
		size_t want = left > NTFF_CHUNK ? NTFF_CHUNK : (size_t)left;
		size_t got = fread(in, 1, want, r->f);

		if (got != want) {
			s->status = NTFF_ST_TRUNCATED;
			ret = tc_err_set(err, -EBADMSG, "%s: section \"%s\" at byte %" PRIu64
					 " is truncated", r->path, s->name, s->offset);
			goto out;
		}
		left -= got;
		crc = ntff_crc(crc, in, got);
		if (zbad)
			continue;	/* the rest only for the CRC: which fault it is */
		if (!inflating) {
			rawn += got;
			if (sink && (ret = sink(ctx, in, got)) < 0)
				goto out;
			continue;
		}
		zs.next_in = in;
		zs.avail_in = (uInt)got;
		zs.avail_out = 1;
		while ((zs.avail_in || zs.avail_out == 0) && zr != Z_STREAM_END) {
			zs.next_out = out;
			zs.avail_out = NTFF_CHUNK;
			zr = inflate(&zs, Z_NO_FLUSH);
			if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
				zbad = true;
				break;
			}
			rawn += NTFF_CHUNK - zs.avail_out;
			if (sink && NTFF_CHUNK - zs.avail_out &&
			    (ret = sink(ctx, out, NTFF_CHUNK - zs.avail_out)) < 0)
				goto out;
		}
	}
	if (crc != s->crc) {
		s->status = NTFF_ST_BAD_CRC;
		ret = tc_err_set(err, -EBADMSG, "%s: section \"%s\" at byte %" PRIu64
				 ": CRC mismatch (stored %08x, computed %08x)", r->path, s->name,
				 s->offset, s->crc, crc);
		goto out;
	}
	if (inflating && (zbad || zr != Z_STREAM_END)) {
		s->status = NTFF_ST_BAD_DATA;
		ret = tc_err_set(err, -EBADMSG, "%s: section \"%s\" at byte %" PRIu64
				 ": corrupt zlib payload", r->path, s->name, s->offset);
		goto out;
	}
	if ((raw ? s->stored_len : s->raw_len) != rawn) {
		s->status = NTFF_ST_BAD_DATA;
		ret = tc_err_set(err, -EBADMSG, "%s: section \"%s\" at byte %" PRIu64
				 ": %" PRIu64 " bytes decoded, header says %" PRIu64, r->path,
				 s->name, s->offset, rawn, raw ? s->stored_len : s->raw_len);
		goto out;
	}
	if (!(s->flags & NTFF_F_ZLIB) && s->raw_len != s->stored_len) {
		s->status = NTFF_ST_BAD_DATA;
		ret = tc_err_set(err, -EBADMSG, "%s: section \"%s\" at byte %" PRIu64
				 ": uncompressed, %" PRIu64 " bytes stored, header says %" PRIu64
				 " raw", r->path, s->name, s->offset, s->stored_len, s->raw_len);
		goto out;
	}
	s->status = NTFF_ST_OK;
out:
	if (inflating)
		inflateEnd(&zs);
	free(in);
	free(out);
	return ret;
}

int
ntff_check(struct ntff_reader *r, size_t i, struct tc_err *err)
{
	struct ntff_section *s = &r->secs[i];

	if (i >= r->n)
		return tc_err_set(err, -EINVAL, "%s: no section %zu", r->path, i);
	/* decoding a compressed payload also proves the zlib stream and raw length */
	return ntff_stream(r, i, !(s->flags & NTFF_F_ZLIB), NULL, NULL, err);
}

static int
ntff_buf_sink(void *ctx, const void *p, size_t n)
{
	tc_buf_add(ctx, p, n);
	return 0;
}

int
ntff_read(struct ntff_reader *r, size_t i, void **data, size_t *len, struct tc_err *err)
{
	struct tc_buf b;
	int ret;

	*data = NULL;
	*len = 0;
	if (i >= r->n)
		return tc_err_set(err, -EINVAL, "%s: no section %zu", r->path, i);
	if (r->secs[i].raw_len > ((uint64_t)1 << 40))
		return tc_err_set(err, -EFBIG, "%s: section \"%s\" too large", r->path,
				  r->secs[i].name);
	tc_buf_init(&b);
	ret = ntff_stream(r, i, false, ntff_buf_sink, &b, err);
	if (ret < 0) {
		tc_buf_free(&b);
		return ret;
	}
	*len = b.len;
	*data = b.data ? tc_buf_steal(&b) : tc_xcalloc(1, 1);
	return 0;
}

struct ntff_file_sink {
	FILE *out;
	const char *name;
	struct tc_err *err;
};

static int
ntff_file_sink(void *ctx, const void *p, size_t n)
{
	struct ntff_file_sink *fs = ctx;

	if (fwrite(p, 1, n, fs->out) != n)
		return tc_err_set(fs->err, -EIO, "%s: write error", fs->name);
	return 0;
}

int
ntff_extract(struct ntff_reader *r, size_t i, FILE *out, const char *out_name, bool raw,
	     struct tc_err *err)
{
	struct ntff_file_sink fs = { out, out_name, err };

	if (i >= r->n)
		return tc_err_set(err, -EINVAL, "%s: no section %zu", r->path, i);
	return ntff_stream(r, i, raw, ntff_file_sink, &fs, err);
}

/* ---- mapping a section ---- */

struct ntff_map {
	void *base;
	size_t len;
};

int
ntff_map(struct ntff_reader *r, size_t i, const void **data, size_t *len, void **cookie,
	 struct tc_err *err)
{
	const struct ntff_section *s;
	struct ntff_map *m = NULL;
	char *tmp = NULL;
	uint64_t start, want;
	long page = sysconf(_SC_PAGESIZE);
	int fd = -1, ret;

	*data = NULL;
	*len = 0;
	*cookie = NULL;
	if (i >= r->n)
		return tc_err_set(err, -EINVAL, "%s: no section %zu", r->path, i);
	s = &r->secs[i];
	if (s->flags & NTFF_F_ZLIB) {
		/* inflate (verifying) into an unlinked temporary file */
		const char *dir = getenv("TMPDIR");
		FILE *f;

		tmp = tc_xasprintf("%s/ntff-XXXXXX", dir && *dir ? dir : "/tmp");
		fd = mkstemp(tmp);
		if (fd < 0) {
			ret = tc_err_set(err, -errno, "%s: %s", tmp, strerror(errno));
			goto out;
		}
		unlink(tmp);
		f = fdopen(dup(fd), "wb");
		if (!f) {
			ret = tc_err_set(err, -errno, "%s: %s", tmp, strerror(errno));
			goto out;
		}
		ret = ntff_extract(r, i, f, tmp, false, err);
		if (fclose(f) && !ret)
			ret = tc_err_set(err, -EIO, "%s: write error", tmp);
		if (ret < 0)
			goto out;
		start = 0;
		want = s->raw_len;
	} else {
		ret = ntff_check(r, i, err);
		if (ret < 0)
			goto out;
		fd = open(r->path, O_RDONLY);
		if (fd < 0) {
			ret = tc_err_set(err, -errno, "%s: %s", r->path, strerror(errno));
			goto out;
		}
		start = s->data_offset;
		want = s->stored_len;
	}
	m = tc_xcalloc(1, sizeof(*m));
	if (want) {
		uint64_t aligned = start & ~(uint64_t)(page - 1);

		m->len = (size_t)(want + (start - aligned));
		m->base = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, fd, (off_t)aligned);
		if (m->base == MAP_FAILED) {
			ret = tc_err_set(err, -errno, "%s: mmap: %s", r->path, strerror(errno));
			m->base = NULL;
			goto out;
		}
		madvise(m->base, m->len, MADV_SEQUENTIAL);
		*data = (const char *)m->base + (start - aligned);
	} else {
		*data = "";
	}
	*len = (size_t)want;
	*cookie = m;
	m = NULL;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(tmp);
	ntff_unmap(m);
	return ret;
}

void
ntff_unmap(void *cookie)
{
	struct ntff_map *m = cookie;

	if (!m)
		return;
	if (m->base)
		munmap(m->base, m->len);
	free(m);
}
