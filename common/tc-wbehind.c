/* SPDX-License-Identifier: MIT */
/*
 * common/tc-wbehind.c - write behind the caller's back: one full buffer at a
 * time is handed to a background thread, which writes it with the owner's
 * callback while the caller fills the next.  At most one buffer is in
 * flight, so buffers are written in the order they were handed over and
 * memory stays at two of them.  The thread starts on the first hand-over;
 * when it cannot be started, hand-overs are written in place.  The first
 * error of the thread's writes is kept and returned by every later call.
 *
 * Users: the writer's spill files (store/st-spill.c) and the direct writes
 * of the trace store under construction (store/st-vfs-direct.c).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include "common/tc.h"

void
tc_wb_init(struct tc_wbehind *wb, tc_wb_fn write, void *ctx, const char *what)
{
	memset(wb, 0, sizeof(*wb));
	wb->write = write;
	wb->ctx = ctx;
	wb->what = what;
}

static void *
tc_wb_thread(void *arg)
{
	struct tc_wbehind *wb = arg;
	void *p;
	size_t n;
	int rc;

	tc_thread_name(wb->what);
	pthread_mutex_lock(&wb->mu);
	for (;;) {
		while (!wb->pend && !wb->quit)
			pthread_cond_wait(&wb->cv, &wb->mu);
		if (!wb->pend)
			break;
		p = wb->pend;
		n = wb->pendn;
		pthread_mutex_unlock(&wb->mu);
		rc = wb->werr ? 0 : wb->write(wb->ctx, p, n);
		pthread_mutex_lock(&wb->mu);
		if (rc < 0 && !wb->werr)
			wb->werr = rc;
		wb->spare = p;
		wb->pend = NULL;
		pthread_cond_broadcast(&wb->cv);
	}
	pthread_mutex_unlock(&wb->mu);
	return NULL;
}

/* Wait, with wb->mu held, until no job is in flight: the first error, or 0. */
static int
tc_wb_idle(struct tc_wbehind *wb)
{
	while (wb->pend)
		pthread_cond_wait(&wb->cv, &wb->mu);
	return wb->werr;
}

int
tc_wb_put(struct tc_wbehind *wb, void **job, size_t n)
{
	int rc;

	if (!wb->thr_on && !wb->no_thr) {
		pthread_mutex_init(&wb->mu, NULL);
		pthread_cond_init(&wb->cv, NULL);
		if (pthread_create(&wb->thr, NULL, tc_wb_thread, wb) == 0) {
			wb->thr_on = true;
		} else {
			pthread_cond_destroy(&wb->cv);
			pthread_mutex_destroy(&wb->mu);
			wb->no_thr = true;	/* written in place from now on */
		}
	}
	if (!wb->thr_on) {
		if (!wb->werr)
			wb->werr = wb->write(wb->ctx, *job, n);
		return wb->werr;	/* *job stays the caller's */
	}
	pthread_mutex_lock(&wb->mu);
	rc = tc_wb_idle(wb);
	if (!rc) {
		wb->pend = *job;
		wb->pendn = n;
		*job = wb->spare;
		wb->spare = NULL;
		pthread_cond_broadcast(&wb->cv);
	}
	pthread_mutex_unlock(&wb->mu);
	return rc;
}

int
tc_wb_wait(struct tc_wbehind *wb)
{
	int rc;

	if (!wb->thr_on)
		return wb->werr;
	pthread_mutex_lock(&wb->mu);
	rc = tc_wb_idle(wb);
	pthread_mutex_unlock(&wb->mu);
	return rc;
}

void *
tc_wb_stop(struct tc_wbehind *wb)
{
	void *spare;

	if (wb->thr_on) {
		pthread_mutex_lock(&wb->mu);
		wb->quit = true;
		pthread_cond_broadcast(&wb->cv);
		pthread_mutex_unlock(&wb->mu);
		pthread_join(wb->thr, NULL);	/* the thread writes what it holds first */
		pthread_cond_destroy(&wb->cv);
		pthread_mutex_destroy(&wb->mu);
		wb->thr_on = false;
	}
	spare = wb->spare;
	wb->spare = NULL;
	return spare;
}
