/* SPDX-License-Identifier: MIT */
/*
 * common/tc-input.c - streaming input that inflates gzip transparently.
 * The gzip magic (1f 8b) is sniffed from the first bytes; file names are
 * never consulted.  Concatenated gzip members are read one after another.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "common/tc.h"

#define TC_INPUT_RAW 256 * 1024

struct tc_input {
	char *name;
	int fd;			/* -1 for memory input */
	const unsigned char *mem;
	size_t mem_len, mem_pos;
	uint64_t raw_off;	/* compressed bytes consumed */
	uint64_t raw_size;
	bool gzip;
	bool z_done;		/* current member finished */
	bool eof;		/* raw input exhausted */
	z_stream z;
	unsigned char *raw;	/* raw read buffer */
	size_t raw_len, raw_pos;
};

static long
tc_input_fill(struct tc_input *in, struct tc_err *err)
{
	ssize_t n;

	if (in->raw_pos < in->raw_len)
		return (long)(in->raw_len - in->raw_pos);
	in->raw_pos = in->raw_len = 0;
	if (in->eof)
		return 0;
	if (in->fd < 0) {
		size_t left = in->mem_len - in->mem_pos;

		if (!left) {
			in->eof = true;
			return 0;
		}
		/* memory input: point straight at the caller's bytes */
		n = (ssize_t)TC_MIN(left, (size_t)TC_INPUT_RAW);
		memcpy(in->raw, in->mem + in->mem_pos, (size_t)n);
		in->mem_pos += (size_t)n;
	} else {
		do
			n = read(in->fd, in->raw, TC_INPUT_RAW);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return tc_err_set(err, -errno, "%s: read error: %s", in->name, strerror(errno));
		if (n == 0) {
			in->eof = true;
			return 0;
		}
	}
	in->raw_len = (size_t)n;
	return n;
}

static int
tc_input_start(struct tc_input *in, struct tc_err *err)
{
	long n = tc_input_fill(in, err);

	if (n < 0)
		return (int)n;
	if (in->raw_len >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b) {
		in->gzip = true;
		memset(&in->z, 0, sizeof(in->z));
		if (inflateInit2(&in->z, 15 + 16) != Z_OK)
			return tc_err_set(err, -ENOMEM, "%s: cannot start inflate", in->name);
	}
	return 0;
}

static struct tc_input *
tc_input_alloc(const char *name)
{
	struct tc_input *in = tc_xcalloc(1, sizeof(*in));

	in->name = tc_xstrdup(name);
	in->fd = -1;
	in->raw = tc_xmalloc(TC_INPUT_RAW);
	return in;
}

int
tc_input_open(struct tc_input **inp, const char *path, struct tc_err *err)
{
	struct tc_input *in;
	struct stat st;
	int rc;

	*inp = NULL;
	in = tc_input_alloc(path);
	if (!strcmp(path, "-")) {
		in->fd = dup(0);
	} else {
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (in->fd < 0) {
		rc = tc_err_set(err, -errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (fstat(in->fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			rc = tc_err_set(err, -EISDIR, "%s: is a directory", path);
			goto out;
		}
		if (S_ISREG(st.st_mode))
			in->raw_size = (uint64_t)st.st_size;
	}
	rc = tc_input_start(in, err);
out:
	if (rc < 0)
		tc_input_close(in);
	else
		*inp = in;
	return rc;
}

int
tc_input_open_mem(struct tc_input **inp, const void *data, size_t len, const char *name,
		  struct tc_err *err)
{
	struct tc_input *in = tc_input_alloc(name ? name : "<memory>");
	int rc;

	in->mem = data;
	in->mem_len = len;
	in->raw_size = len;
	rc = tc_input_start(in, err);
	if (rc < 0) {
		tc_input_close(in);
		in = NULL;
	}
	*inp = in;
	return rc;
}

long
tc_input_read(struct tc_input *in, void *buf, size_t n, struct tc_err *err)
{
	long avail;
	int zr;

	if (!n)
		return 0;
	if (!in->gzip) {
		if (in->fd >= 0 && in->raw_pos == in->raw_len && !in->eof && n >= TC_INPUT_RAW) {
			ssize_t r;

			/* a large read of a plain file goes straight to @buf */
			do
				r = read(in->fd, buf, n);
			while (r < 0 && errno == EINTR);
			if (r < 0)
				return tc_err_set(err, -errno, "%s: read error: %s", in->name,
						  strerror(errno));
			if (r == 0)
				in->eof = true;
			in->raw_off += (uint64_t)r;
			return (long)r;
		}
		avail = tc_input_fill(in, err);
		if (avail <= 0)
			return avail;
		n = TC_MIN(n, (size_t)avail);
		memcpy(buf, in->raw + in->raw_pos, n);
		in->raw_pos += n;
		in->raw_off += n;
		return (long)n;
	}
	for (;;) {
		avail = tc_input_fill(in, err);
		if (avail < 0)
			return avail;
		if (avail == 0) {
			if (in->z_done)
				return 0;
			return tc_err_set(err, -EPROTO, "%s: truncated gzip stream at byte %llu",
					  in->name, (unsigned long long)in->raw_off);
		}
		if (in->z_done) {
			/* another member follows, or trailing garbage */
			if (in->raw[in->raw_pos] != 0x1f) {
				in->raw_pos = in->raw_len;
				in->eof = true;
				return 0;
			}
			inflateReset(&in->z);
			in->z_done = false;
		}
		in->z.next_in = in->raw + in->raw_pos;
		in->z.avail_in = (uInt)avail;
		in->z.next_out = buf;
		in->z.avail_out = (uInt)TC_MIN(n, (size_t)UINT32_MAX);
		zr = inflate(&in->z, Z_NO_FLUSH);
		in->raw_off += (uint64_t)avail - in->z.avail_in;
		in->raw_pos = in->raw_len - in->z.avail_in;
		if (zr == Z_STREAM_END)
			in->z_done = true;
		else if (zr != Z_OK && zr != Z_BUF_ERROR)
			return tc_err_set(err, -EPROTO, "%s: corrupt gzip stream at byte %llu: %s",
					  in->name, (unsigned long long)in->raw_off,
					  in->z.msg ? in->z.msg : "inflate error");
		if (n - in->z.avail_out > 0)
			return (long)(n - in->z.avail_out);
	}
}

bool
tc_input_is_gzip(const struct tc_input *in)
{
	return in->gzip;
}

uint64_t
tc_input_raw_offset(const struct tc_input *in)
{
	return in->raw_off;
}

uint64_t
tc_input_raw_size(const struct tc_input *in)
{
	return in->raw_size;
}

const char *
tc_input_name(const struct tc_input *in)
{
	return in->name;
}

void
tc_input_close(struct tc_input *in)
{
	if (!in)
		return;
	if (in->gzip)
		inflateEnd(&in->z);
	if (in->fd >= 0)
		close(in->fd);
	free(in->raw);
	free(in->name);
	free(in);
}
