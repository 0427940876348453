/* SPDX-License-Identifier: MIT */
/*
 * store/st-spill.c - append-only spill files for the writer's staging: a
 * file next to the trace database, unlinked as soon as it is created (it
 * vanishes with the process), written through 1 MiB buffers and mapped
 * read-only for the random-access pass of st_writer_finish().
 *
 * The write(2) of a full buffer (the copy into the page cache, about an
 * eighth of a JSON ingest's CPU before finish) runs in a background thread
 * per spill while the caller fills a second buffer: at most one buffer is in
 * flight, so the file is written in order and memory stays at two buffers.
 * The thread's first error is returned by the next st_spill_write() or
 * st_spill_map().  Without a thread (pthread_create failed) writes are
 * synchronous.
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

static void *
st_spill_thread(void *arg)
{
	struct st_spill *sp = arg;
	char *p;
	size_t n;
	int rc;

	tc_thread_name("spill-write");

	pthread_mutex_lock(&sp->mu);
	for (;;) {
		while (!sp->pend && !sp->quit)
			pthread_cond_wait(&sp->cv, &sp->mu);
		if (!sp->pend)
			break;
		p = sp->pend;
		n = sp->pendn;
		pthread_mutex_unlock(&sp->mu);
		rc = sp->werr ? 0 : tc_write_all(sp->fd, p, n);
		pthread_mutex_lock(&sp->mu);
		if (rc < 0 && !sp->werr)
			sp->werr = rc;
		sp->spare = p;
		sp->pend = NULL;
		pthread_cond_broadcast(&sp->cv);
	}
	pthread_mutex_unlock(&sp->mu);
	return NULL;
}

/* Wait until the buffer in flight is written; the thread's first error. */
static int
st_spill_wait(struct st_spill *sp)
{
	int rc;

	if (!sp->thr_on)
		return 0;
	pthread_mutex_lock(&sp->mu);
	while (sp->pend)
		pthread_cond_wait(&sp->cv, &sp->mu);
	rc = sp->werr;
	pthread_mutex_unlock(&sp->mu);
	return rc;
}

static void
st_spill_stop(struct st_spill *sp)
{
	if (!sp->thr_on)
		return;
	pthread_mutex_lock(&sp->mu);
	sp->quit = true;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
	pthread_join(sp->thr, NULL);
	pthread_cond_destroy(&sp->cv);
	pthread_mutex_destroy(&sp->mu);
	sp->thr_on = false;
}

/* Hand the full buffer to the thread (started on first use) and go on with the other one. */
static int
st_spill_flush_async(struct st_spill *sp)
{
	int rc;

	if (!sp->thr_on && !sp->no_thr) {
		pthread_mutex_init(&sp->mu, NULL);
		pthread_cond_init(&sp->cv, NULL);
		if (pthread_create(&sp->thr, NULL, st_spill_thread, sp) == 0) {
			sp->thr_on = true;
		} else {
			pthread_cond_destroy(&sp->cv);
			pthread_mutex_destroy(&sp->mu);
			sp->no_thr = true;	/* write in place from now on */
		}
	}
	if (!sp->thr_on) {
		rc = tc_write_all(sp->fd, sp->buf, sp->n);
		sp->n = 0;
		return rc;
	}
	pthread_mutex_lock(&sp->mu);
	while (sp->pend)
		pthread_cond_wait(&sp->cv, &sp->mu);
	rc = sp->werr;
	if (!rc) {
		sp->pend = sp->buf;
		sp->pendn = sp->n;
		sp->buf = sp->spare;
		sp->spare = NULL;
		pthread_cond_broadcast(&sp->cv);
	}
	pthread_mutex_unlock(&sp->mu);
	if (!sp->buf)
		sp->buf = tc_xmalloc(ST_SPILL_BUF);
	sp->n = 0;
	return rc;
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
			rc = st_spill_flush_async(sp);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

int
st_spill_map(struct st_spill *sp)
{
	int rc;

	if (sp->map)
		return 0;	/* mapped already */
	rc = st_spill_wait(sp);

	st_spill_stop(sp);
	if (rc < 0)
		return rc;
	rc = tc_write_all(sp->fd, sp->buf, sp->n);
	sp->n = 0;
	if (rc < 0)
		return rc;
	free(sp->buf);
	free(sp->spare);
	sp->buf = sp->spare = NULL;
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
	st_spill_stop(sp);
	if (sp->map)
		munmap(sp->map, sp->mapsz);
	if (sp->fd > 0)
		close(sp->fd);
	free(sp->buf);
	free(sp->spare);
	free(sp->pend);
	memset(sp, 0, sizeof(*sp));
}
