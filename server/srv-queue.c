/* SPDX-License-Identifier: MIT */
/*
 * server/srv-queue.c - the ingest queue and its worker threads.  Uploads push
 * trace ids (already committed to the catalog as "queued"); each worker has
 * its own st_library (its own catalog connection), pops an id, ingests it
 * with st_library_ingest() and reports progress both in memory (for the API)
 * and, at most once a second, in the catalog row.  On stop, a worker finishes
 * the ingest it has; ids still queued stay "queued" in the catalog and are
 * picked up again by st_library_recover() at the next start.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "server/srv-int.h"

/* Called with q_mu held. */
static ssize_t
queue_find(struct srv *s, const char *id)
{
	for (size_t i = 0; i < s->q_len; i++) {
		size_t k = (s->q_head + i) % s->q_cap;

		if (!strcmp(s->q[k], id))
			return (ssize_t)i;
	}
	return -1;
}

int
srv_queue_push(struct srv *s, const char *id, bool force)
{
	int rc = 0;

	pthread_mutex_lock(&s->q_mu);
	if (!force && s->q_len >= (size_t)s->opts.max_queue) {
		rc = -EAGAIN;
		goto out;
	}
	if (queue_find(s, id) >= 0)
		goto out;
	if (s->q_len == s->q_cap) {
		size_t ncap = s->q_cap ? s->q_cap * 2 : 64;
		char (*nq)[ST_ID_LEN + 1] = tc_xcalloc(ncap, sizeof(*nq));

		for (size_t i = 0; i < s->q_len; i++)
			memcpy(nq[i], s->q[(s->q_head + i) % s->q_cap], sizeof(*nq));
		free(s->q);
		s->q = nq;
		s->q_cap = ncap;
		s->q_head = 0;
	}
	snprintf(s->q[(s->q_head + s->q_len) % s->q_cap], ST_ID_LEN + 1, "%s", id);
	s->q_len++;
	pthread_cond_signal(&s->q_cv);
out:
	pthread_mutex_unlock(&s->q_mu);
	return rc;
}

bool
srv_queue_full(struct srv *s)
{
	bool full;

	pthread_mutex_lock(&s->q_mu);
	full = s->q_len >= (size_t)s->opts.max_queue;
	pthread_mutex_unlock(&s->q_mu);
	return full;
}

size_t
srv_queue_len(struct srv *s)
{
	size_t n;

	pthread_mutex_lock(&s->q_mu);
	n = s->q_len;
	pthread_mutex_unlock(&s->q_mu);
	return n;
}

int
srv_queue_busy(struct srv *s)
{
	int n = 0;

	pthread_mutex_lock(&s->q_mu);
	for (int i = 0; i < s->nworkers; i++)
		n += s->workers[i].current[0] != 0;
	pthread_mutex_unlock(&s->q_mu);
	return n;
}

/* Called with q_mu held. */
static struct srv_worker *
worker_of(struct srv *s, const char *id)
{
	for (int i = 0; i < s->nworkers; i++)
		if (!strcmp(s->workers[i].current, id))
			return &s->workers[i];
	return NULL;
}

int
srv_queue_remove(struct srv *s, const char *id)
{
	ssize_t i;
	int rc = 0;

	pthread_mutex_lock(&s->q_mu);
	if (worker_of(s, id)) {
		rc = -EBUSY;
		goto out;
	}
	i = queue_find(s, id);
	if (i < 0)
		goto out;
	for (size_t k = (size_t)i; k + 1 < s->q_len; k++)
		memcpy(s->q[(s->q_head + k) % s->q_cap], s->q[(s->q_head + k + 1) % s->q_cap],
		       ST_ID_LEN + 1);
	s->q_len--;
	rc = 1;
out:
	pthread_mutex_unlock(&s->q_mu);
	return rc;
}

bool
srv_queue_cancel(struct srv *s, const char *id)
{
	struct srv_worker *w;

	pthread_mutex_lock(&s->q_mu);
	w = worker_of(s, id);
	if (w)
		w->cancel = true;
	pthread_mutex_unlock(&s->q_mu);
	return w != NULL;
}

bool
srv_queue_progress(struct srv *s, const char *id, double *progress, int *phase)
{
	struct srv_worker *w;
	bool found = false;

	pthread_mutex_lock(&s->q_mu);
	w = worker_of(s, id);
	if (w) {
		*progress = w->progress;
		*phase = w->phase;
		found = true;
	}
	pthread_mutex_unlock(&s->q_mu);
	return found;
}

void
srv_queue_wait(struct srv *s, const char *id, int64_t deadline_ns)
{
	pthread_mutex_lock(&s->q_mu);
	while (!s->stopping && (queue_find(s, id) >= 0 || worker_of(s, id)) &&
	       tc_mono_ns() < deadline_ns) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&s->done_cv, &s->q_mu, &ts);
	}
	pthread_mutex_unlock(&s->q_mu);
}

/*
 * The ingest's progress, for the API (the library keeps the catalog row's);
 * non-zero when the ingest is to stop (a DELETE, the server stopping).
 */
static int
worker_progress(void *ctx, const struct st_progress *p)
{
	struct srv_worker *w = ctx;
	struct srv *s = w->srv;
	bool cancel;

	pthread_mutex_lock(&s->q_mu);
	w->progress = p->frac;
	w->phase = p->phase;
	cancel = w->cancel;
	pthread_mutex_unlock(&s->q_mu);
	return cancel;
}

static int64_t
raw_size(struct srv_worker *w, const char *id)
{
	sqlite3_stmt *st = NULL;
	int64_t n = 0;

	if (sqlite3_prepare_v2(st_library_catalog(w->lib), "SELECT size FROM traces WHERE id = ?1",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return n;
}

static void *
worker_main(void *arg)
{
	struct srv_worker *w = arg;
	struct srv *s = w->srv;

	tc_thread_name("ingest");
	for (;;) {
		char id[ST_ID_LEN + 1];
		struct tc_err err = { 0 };
		int rc;

		pthread_mutex_lock(&s->q_mu);
		while (!s->stopping && s->q_len == 0)
			pthread_cond_wait(&s->q_cv, &s->q_mu);
		if (s->stopping) {
			pthread_mutex_unlock(&s->q_mu);
			break;
		}
		memcpy(id, s->q[s->q_head], sizeof(id));
		s->q_head = (s->q_head + 1) % s->q_cap;
		s->q_len--;
		memcpy(w->current, id, sizeof(id));
		w->progress = 0;
		w->phase = ST_PHASE_READING;
		w->cancel = false;
		pthread_mutex_unlock(&s->q_mu);

		/* (the library marks the row ingesting) */
		rc = st_library_ingest(w->lib, id, worker_progress, w, NULL, &err);
		if (rc == -ECANCELED) {
			/* asked for; the row is queued again for the next start */
			atomic_fetch_add(&s->m.ingests_cancelled, 1);
			fprintf(stderr, "neuron-explorer: ingest %s cancelled\n", id);
		} else if (rc < 0) {
			atomic_fetch_add(&s->m.ingests_failed, 1);
			fprintf(stderr, "neuron-explorer: ingest %s failed: %s\n", id, err.msg);
		} else {
			atomic_fetch_add(&s->m.ingests_ok, 1);
		}
		if (rc != -ECANCELED)
			atomic_fetch_add(&s->m.ingest_bytes, (uint64_t)raw_size(w, id));
		/*
		 * The ingest freed its staging (edge pages, runs, chunks), but
		 * glibc keeps freed heap memory in this thread's arena: an idle
		 * server held 1.45 GB after a 10M-event ingest.  Hand it back.
		 */
		malloc_trim(0);

		pthread_mutex_lock(&s->q_mu);
		w->current[0] = 0;
		w->progress = 0;
		pthread_cond_broadcast(&s->done_cv);
		pthread_mutex_unlock(&s->q_mu);
		if (!rc)	/* written around the page cache: read it back in */
			st_library_warm(w->lib, id);
	}
	return NULL;
}

int
srv_queue_start(struct srv *s, struct tc_err *err)
{
	int rc = 0;

	s->workers = tc_xcalloc((size_t)s->opts.workers, sizeof(*s->workers));
	for (int i = 0; i < s->opts.workers; i++) {
		struct srv_worker *w = &s->workers[i];

		w->srv = s;
		rc = st_library_open(&w->lib, s->opts.data, err);
		if (rc < 0)
			goto out;
		sqlite3_busy_timeout(st_library_catalog(w->lib), 10000);
		rc = -pthread_create(&w->thread, NULL, worker_main, w);
		if (rc < 0) {
			st_library_close(w->lib);
			w->lib = NULL;
			tc_err_set(err, rc, "cannot start ingest worker: %s", strerror(-rc));
			goto out;
		}
		s->nworkers++;
	}
out:
	return rc;
}

void
srv_queue_stop(struct srv *s)
{
	pthread_mutex_lock(&s->q_mu);
	s->stopping = true;
	/* ingests in flight stop at their next report and resume at the next start */
	for (int i = 0; i < s->nworkers; i++)
		s->workers[i].cancel = true;
	pthread_cond_broadcast(&s->q_cv);
	pthread_cond_broadcast(&s->done_cv);
	pthread_mutex_unlock(&s->q_mu);
	for (int i = 0; i < s->nworkers; i++) {
		pthread_join(s->workers[i].thread, NULL);
		st_library_close(s->workers[i].lib);
		s->workers[i].lib = NULL;
	}
}

void
srv_queue_free(struct srv *s)
{
	free(s->workers);
	s->workers = NULL;
	s->nworkers = 0;
	free(s->q);
	s->q = NULL;
	s->q_len = s->q_cap = s->q_head = 0;
}
