/* SPDX-License-Identifier: MIT */
/*
 * store/st-chunk-out.c - a thread that inserts finished event chunks.
 *
 * The thread is woken per batch of ST_CHUNK_BATCH chunks, not per chunk,
 * and writers are woken only when one waits for a slot: a wake-up per chunk
 * (90k of them on a 23M-event trace) cost more CPU in the scheduler than
 * some of the inserts.
 *
 * Every ST_CHUNK_WRITEBACK bytes of chunks the thread also asks the kernel
 * to start writing the store file out (sync_file_range, without waiting), so
 * that the disk works while the finish pass runs and the final fsync finds
 * little left to write.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/tc-sort.h"
#include "store/st-chunk.h"

/* Insert one chunk; called with dbmu held.  Return 0 or -EIO (o->msg set). */
static int
st_chunk_write(struct st_chunk_out *o, const struct st_chunk_job *j)
{
	sqlite3_stmt *c = o->ins_chunk, *d = o->ins_data;
	int rc = 0;

	sqlite3_bind_int64(c, 1, j->dir.first);
	sqlite3_bind_int(c, 2, j->dir.unit);
	sqlite3_bind_int(c, 3, j->dir.count);
	sqlite3_bind_int64(c, 4, j->dir.ts_first);
	sqlite3_bind_int64(c, 5, j->dir.ts_last);
	sqlite3_bind_int64(c, 6, j->dir.end_max);
	sqlite3_bind_int(c, 7, j->dir.min_depth);
	sqlite3_bind_int(c, 8, j->dir.max_depth);
	sqlite3_bind_blob(c, 9, j->dir.bloom, ST_BLOOM_BYTES, SQLITE_STATIC);
	sqlite3_bind_int64(d, 1, j->dir.first);
	sqlite3_bind_blob(d, 2, j->cols.data, (int)j->cols.len, SQLITE_STATIC);
	if (j->args.len)	/* no event of the chunk has args: NULL */
		sqlite3_bind_blob(d, 3, j->args.data, (int)j->args.len, SQLITE_STATIC);
	else
		sqlite3_bind_null(d, 3);
	if (sqlite3_step(c) != SQLITE_DONE || sqlite3_step(d) != SQLITE_DONE) {
		snprintf(o->msg, sizeof(o->msg), "events: %s", sqlite3_errmsg(o->db));
		rc = -EIO;
	} else {
		TC_GROW(o->dirs, o->ndirs, o->cdirs, 256);
		o->dirs[o->ndirs++] = j->dir;	/* for event_dir, at the end */
	}
	sqlite3_reset(c);
	sqlite3_reset(d);
	sqlite3_clear_bindings(d);	/* the blobs point into the job's buffers */
	return rc;
}

/* Insert chunk @j; called without o->mu. */
static int
st_chunk_write_one(struct st_chunk_out *o, struct st_chunk_job *j)
{
	int rc = 0;

	if (!o->rc) {	/* after a failure the rest is dropped */
		pthread_mutex_lock(&o->dbmu);
		rc = st_chunk_write(o, j);
		pthread_mutex_unlock(&o->dbmu);
	}
	o->unsynced += j->cols.len + j->args.len;
	if (o->fd >= 0 && o->unsynced >= ST_CHUNK_WRITEBACK) {
#ifdef SYNC_FILE_RANGE_WRITE
		(void)sync_file_range(o->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
		o->unsynced = 0;
	}
	tc_buf_reset(&j->cols);
	tc_buf_reset(&j->args);
	return rc;
}

/*
 * Woken when ST_CHUNK_BATCH chunks wait, the thread inserts chunks until
 * the queue is empty, giving each slot back as soon as its chunk is in;
 * writers waiting for a slot are woken when half the queue is free.  Both
 * sides sleep and wake in batches: a wake-up per chunk (90k of them on a
 * 23M-event trace) cost more than some of the inserts, and giving the slots
 * back only at the end of a batch left the writers waiting on a full queue
 * while it was being emptied.
 */
static void *
st_chunk_thread(void *arg)
{
	struct st_chunk_out *o = arg;

	tc_thread_name("chunk-insert");
	pthread_mutex_lock(&o->mu);
	for (;;) {
		while (o->n < ST_CHUNK_BATCH && !o->quit) {
			o->idle = true;
			pthread_cond_wait(&o->cv_have, &o->mu);
		}
		o->idle = false;
		if (!o->n)
			break;
		while (o->n) {
			struct st_chunk_job *j = &o->q[o->head];
			int rc;

			pthread_mutex_unlock(&o->mu);
			rc = st_chunk_write_one(o, j);
			pthread_mutex_lock(&o->mu);
			if (rc && !o->rc)
				o->rc = rc;
			o->head = (o->head + 1) % ST_CHUNK_QLEN;
			o->n--;
			if (o->nwait && o->n <= ST_CHUNK_QLEN / 2)
				pthread_cond_broadcast(&o->cv_free);
		}
	}
	pthread_mutex_unlock(&o->mu);
	return NULL;
}

int
st_chunk_out_start(struct st_chunk_out *o, sqlite3 *db, struct tc_err *err)
{
	const char *path = sqlite3_db_filename(db, "main");

	memset(o, 0, sizeof(*o));
	o->db = db;
	o->fd = path && *path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	pthread_mutex_init(&o->mu, NULL);
	pthread_mutex_init(&o->dbmu, NULL);
	pthread_cond_init(&o->cv_have, NULL);
	pthread_cond_init(&o->cv_free, NULL);
	for (int i = 0; i < ST_CHUNK_QLEN; i++) {
		tc_buf_init(&o->q[i].cols);
		tc_buf_init(&o->q[i].args);
	}
	if (sqlite3_prepare_v2(db, "INSERT INTO event_chunks VALUES (?,?,?,?,?,?,?,?,?)", -1,
			       &o->ins_chunk, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO event_data VALUES (?,?,?)", -1, &o->ins_data,
			       NULL) != SQLITE_OK)
		return tc_err_set(err, -EIO, "events: %s", sqlite3_errmsg(db));
	o->thr_on = pthread_create(&o->thr, NULL, st_chunk_thread, o) == 0;
	return 0;
}

int
st_chunk_out_put(struct st_chunk_out *o, const struct st_chunk_dir *dir, struct tc_buf *cols,
		 struct tc_buf *args)
{
	struct st_chunk_job *j, tmp;
	int rc;

	if (!o->thr_on) {
		tmp.dir = *dir;
		tmp.cols = *cols;
		tmp.args = *args;
		/* the finish parts share the connection: one insert at a time */
		pthread_mutex_lock(&o->dbmu);
		rc = o->rc ? o->rc : st_chunk_write(o, &tmp);
		if (rc && !o->rc)
			o->rc = rc;
		pthread_mutex_unlock(&o->dbmu);
		tc_buf_reset(cols);
		tc_buf_reset(args);
		return rc;
	}
	pthread_mutex_lock(&o->mu);
	while (o->n == ST_CHUNK_QLEN) {
		o->nwait++;
		pthread_cond_wait(&o->cv_free, &o->mu);
		o->nwait--;
	}
	rc = o->rc;
	if (!rc) {
		j = &o->q[(o->head + o->n) % ST_CHUNK_QLEN];
		tmp.cols = j->cols;	/* empty, keeps its storage */
		tmp.args = j->args;
		j->dir = *dir;
		j->cols = *cols;
		j->args = *args;
		*cols = tmp.cols;
		*args = tmp.args;
		o->n++;
		if (o->idle && o->n >= ST_CHUNK_BATCH)
			pthread_cond_signal(&o->cv_have);
	}
	pthread_mutex_unlock(&o->mu);
	return rc;
}

void
st_chunk_out_lock(struct st_chunk_out *o)
{
	pthread_mutex_lock(&o->dbmu);
}

void
st_chunk_out_unlock(struct st_chunk_out *o)
{
	pthread_mutex_unlock(&o->dbmu);
}

int
st_chunk_out_finish(struct st_chunk_out *o, bool write_dir, struct tc_err *err)
{
	int rc;

	if (!o->db)
		return 0;
	if (o->thr_on) {
		pthread_mutex_lock(&o->mu);
		o->quit = true;
		pthread_cond_signal(&o->cv_have);
		pthread_mutex_unlock(&o->mu);
		pthread_join(o->thr, NULL);
		o->thr_on = false;
	}
	rc = o->rc;
	if (rc)
		tc_err_set(err, rc, "%s", o->msg);
	else if (write_dir)
		rc = st_chunk_dir_write(o->db, o->dirs, o->ndirs, err);
	free(o->dirs);
	o->dirs = NULL;
	o->ndirs = o->cdirs = 0;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	sqlite3_finalize(o->ins_chunk);
	sqlite3_finalize(o->ins_data);
	for (int i = 0; i < ST_CHUNK_QLEN; i++) {
		tc_buf_free(&o->q[i].cols);
		tc_buf_free(&o->q[i].args);
	}
	pthread_mutex_destroy(&o->mu);
	pthread_mutex_destroy(&o->dbmu);
	pthread_cond_destroy(&o->cv_have);
	pthread_cond_destroy(&o->cv_free);
	o->db = NULL;
	return rc;
}

#define DIR_FIRST_LT(x, y) ((x)->first < (y)->first)
TC_MSORT_DEFINE(dir_sort, struct st_chunk_dir, DIR_FIRST_LT)

int
st_chunk_dir_write(sqlite3 *db, struct st_chunk_dir *dirs, size_t n, struct tc_err *err)
{
	sqlite3_stmt *ins = NULL;
	uint8_t *buf = NULL;
	int rc = 0;

	if (n > 1) {		/* the finish parts insert their units' chunks side by side */
		struct st_chunk_dir *tmp = tc_xmalloc((n / 2 + 1) * sizeof(*tmp));

		dir_sort(dirs, tmp, n);
		free(tmp);
	}
	if (sqlite3_exec(db, "DELETE FROM event_dir", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO event_dir VALUES (?1, ?2)", -1, &ins,
			       NULL) != SQLITE_OK) {
		rc = tc_err_set(err, -EIO, "events: directory: %s", sqlite3_errmsg(db));
		goto out;
	}
	buf = tc_xmalloc((size_t)TC_MIN(n, (size_t)ST_DIR_PART) * ST_DIR_REC + 1);
	for (size_t at = 0, part = 0; at < n; part++) {
		size_t k = TC_MIN(n - at, (size_t)ST_DIR_PART);

		for (size_t i = 0; i < k; i++)
			st_chunk_dir_put(buf + i * ST_DIR_REC, &dirs[at + i]);
		sqlite3_bind_int64(ins, 1, (int64_t)part);
		sqlite3_bind_blob(ins, 2, buf, (int)(k * ST_DIR_REC), SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE) {
			rc = tc_err_set(err, -EIO, "events: directory: %s", sqlite3_errmsg(db));
			goto out;
		}
		sqlite3_reset(ins);
		at += k;
	}
out:
	sqlite3_finalize(ins);
	free(buf);
	return rc;
}

int
st_chunk_dir_pack(sqlite3 *db, struct tc_err *err)
{
	sqlite3_stmt *rows = NULL;
	struct st_chunk_dir *dirs = NULL;
	size_t n = 0, cap = 0;
	int rc = 0, s;

	if (sqlite3_prepare_v2(db, "SELECT " ST_DIR_COLS " FROM event_chunks ORDER BY id", -1,
			       &rows, NULL) != SQLITE_OK) {
		rc = tc_err_set(err, -EIO, "events: directory: %s", sqlite3_errmsg(db));
		goto out;
	}
	while ((s = sqlite3_step(rows)) == SQLITE_ROW) {
		struct st_chunk_dir *d;

		TC_GROW(dirs, n, cap, 256);
		d = &dirs[n++];
		if (st_chunk_dir_row(rows, d) < 0) {
			rc = tc_err_set(err, -EIO, "events: chunk %lld: name filter of %d bytes",
					(long long)d->first, sqlite3_column_bytes(rows, 8));
			goto out;
		}
	}
	if (s != SQLITE_DONE) {
		rc = tc_err_set(err, -EIO, "events: directory: %s", sqlite3_errmsg(db));
		goto out;
	}
	rc = st_chunk_dir_write(db, dirs, n, err);
out:
	sqlite3_finalize(rows);
	free(dirs);
	return rc;
}
