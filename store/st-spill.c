/* SPDX-License-Identifier: MIT */
/*
 * store/st-spill.c - append-only spill files for the writer's staging: a
 * file next to the trace database, unlinked as soon as it is created (it
 * vanishes with the process), written through a 1 MiB buffer and mapped
 * read-only for the random-access pass of st_writer_finish().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "store/store-int.h"

#define ST_SPILL_BUF (1u << 20)

int
st_spill_open(struct st_spill *sp, const char *base, const char *suffix, struct tc_err *err)
{
	char *path = tc_xasprintf("%s%s", base, suffix);
	int rc = 0;

	memset(sp, 0, sizeof(*sp));
	sp->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (sp->fd < 0) {
		rc = tc_err_set(err, -errno, "%s: cannot create: %s", path, strerror(errno));
		goto out;
	}
	unlink(path);
	sp->buf = tc_xmalloc(ST_SPILL_BUF);
out:
	free(path);
	return rc;
}

static int
st_spill_flush(struct st_spill *sp)
{
	size_t off = 0;

	while (off < sp->n) {
		ssize_t k = write(sp->fd, sp->buf + off, sp->n - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		off += (size_t)k;
	}
	sp->n = 0;
	return 0;
}

int
st_spill_write(struct st_spill *sp, const void *p, size_t n)
{
	const char *s = p;
	int rc;

	sp->size += n;
	while (n) {
		size_t k = TC_MIN(n, ST_SPILL_BUF - sp->n);

		memcpy(sp->buf + sp->n, s, k);
		sp->n += k;
		s += k;
		n -= k;
		if (sp->n == ST_SPILL_BUF) {
			rc = st_spill_flush(sp);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

int
st_spill_map(struct st_spill *sp)
{
	int rc = st_spill_flush(sp);

	if (rc < 0)
		return rc;
	free(sp->buf);
	sp->buf = NULL;
	if (!sp->size)
		return 0;
	if (sp->size > SIZE_MAX)
		return -EFBIG;
	sp->map = mmap(NULL, (size_t)sp->size, PROT_READ, MAP_SHARED, sp->fd, 0);
	if (sp->map == MAP_FAILED) {
		sp->map = NULL;
		return -errno;
	}
	sp->mapsz = (size_t)sp->size;
	return 0;
}

void
st_spill_drop(struct st_spill *sp)
{
	if (sp->map)
		madvise(sp->map, sp->mapsz, MADV_DONTNEED);
}

void
st_spill_close(struct st_spill *sp)
{
	if (sp->map)
		munmap(sp->map, sp->mapsz);
	if (sp->fd > 0)
		close(sp->fd);
	free(sp->buf);
	memset(sp, 0, sizeof(*sp));
}
