/* SPDX-License-Identifier: MIT */
/* common/tc-util.c - clocks, random ids, directories, hashing, parsing. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "common/tc.h"

int64_t
tc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
tc_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
tc_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int
tc_random_hex(char *out, size_t nbytes)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[64];
	size_t i;

	if (nbytes > sizeof(b))
		return -EINVAL;
	if (getrandom(b, nbytes, 0) != (ssize_t)nbytes)
		return -errno;
	for (i = 0; i < nbytes; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[2 * nbytes] = '\0';
	return 0;
}

int
tc_mkdir_p(const char *path, int mode)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);
	char *p;

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, (mode_t)mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, (mode_t)mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int
tc_fsync_open(const char *path, int flags)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int
tc_fsync_dir(const char *dir)
{
	return tc_fsync_open(dir, O_DIRECTORY);
}

int
tc_fsync_file(const char *path)
{
	return tc_fsync_open(path, 0);
}

int
tc_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int
tc_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
tc_sha256_file(const char *path, char hex[65], struct tc_err *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;
	EVP_MD_CTX *ctx = NULL;
	unsigned char *buf = NULL;
	ssize_t n;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tc_err_set(err, -errno, "%s: %s", path, strerror(errno));
	buf = tc_xmalloc(1 << 20);
	ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		rc = tc_err_set(err, -ENOMEM, "%s: cannot start sha256", path);
		goto out;
	}
	while ((n = read(fd, buf, 1 << 20)) > 0)
		EVP_DigestUpdate(ctx, buf, (size_t)n);
	if (n < 0) {
		rc = tc_err_set(err, -errno, "%s: read error: %s", path, strerror(errno));
		goto out;
	}
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	for (i = 0; i < mdlen && i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
out:
	EVP_MD_CTX_free(ctx);
	free(buf);
	close(fd);
	return rc;
}

int
tc_parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno)
		return -errno;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int
tc_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -errno;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

const char *
tc_human_bytes(uint64_t n, char *buf, size_t len)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	unsigned u = 0;

	while (v >= 1024 && u + 1 < TC_ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " B", n);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

void
tc_thread_name(const char *what)
{
	char name[16];

	snprintf(name, sizeof(name), "nx-%s", what);
	pthread_setname_np(pthread_self(), name);
}

long
tc_env_num(const char *name, long lo, long hi, long dflt)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return dflt;
	errno = 0;
	v = strtol(s, &end, 10);
	return !*end && !errno && v >= lo && v <= hi ? v : dflt;
}

int
tc_write_errno(void)
{
	return errno == ENOSPC || errno == EDQUOT ? errno : EIO;
}

void
tc_remove_partial(const char *path)
{
	struct stat sb;

	if (path && lstat(path, &sb) == 0 && S_ISREG(sb.st_mode))
		unlink(path);
}
