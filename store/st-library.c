/* SPDX-License-Identifier: MIT */
/*
 * store/st-library.c - the data directory: catalog, content-addressed raw
 * files, published trace stores, and crash recovery.
 *
 * Durability order for an add: raw file complete + fsync -> rename into
 * raw/ -> fsync raw/ -> catalog row committed (WAL, synchronous=FULL).  For an
 * ingest: temp store complete + fsync -> rename into traces/ -> fsync
 * traces/ -> catalog row "ready".  A crash between steps leaves an orphan
 * (removed by st_library_recover) or a row that is re-queued, never a half
 * trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "store/store-int.h"
#include "store/library.h"
#include "ingest/ingest.h"

struct st_library {
	char *dir;
	sqlite3 *cat;
	pthread_mutex_t lock;	/* serialises catalog statements */
};

static int
st_lib_prepare(struct st_library *lib, sqlite3_stmt **s, const char *sql, struct tc_err *err)
{
	if (sqlite3_prepare_v2(lib->cat, sql, -1, s, NULL) != SQLITE_OK)
		return tc_err_set(err, -EIO, "catalog: %s", sqlite3_errmsg(lib->cat));
	return 0;
}

int
st_library_open(struct st_library **libp, const char *data_dir, struct tc_err *err)
{
	struct st_library *lib = tc_xcalloc(1, sizeof(*lib));
	static const char *const subdirs[] = { "raw", "traces", "tmp" };
	char *p = NULL;
	size_t i;
	int rc;

	*libp = NULL;
	pthread_mutex_init(&lib->lock, NULL);
	lib->dir = tc_xstrdup(data_dir);
	for (i = 0; i < TC_ARRAY_SIZE(subdirs); i++) {
		free(p);
		p = tc_xasprintf("%s/%s", data_dir, subdirs[i]);
		rc = tc_mkdir_p(p, 0755);
		if (rc < 0) {
			tc_err_set(err, rc, "%s: cannot create: %s", p, strerror(-rc));
			goto out;
		}
	}
	free(p);
	p = tc_xasprintf("%s/catalog.db", data_dir);
	if (sqlite3_open_v2(p, &lib->cat, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
		rc = tc_err_set(err, -EIO, "%s: %s", p,
				lib->cat ? sqlite3_errmsg(lib->cat) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(lib->cat, 10000);
	rc = st_exec(lib->cat, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", err);
	if (!rc)
		rc = st_schema_open_catalog(lib->cat, err);
out:
	free(p);
	if (rc < 0)
		st_library_close(lib);
	else
		*libp = lib;
	return rc;
}

void
st_library_close(struct st_library *lib)
{
	if (!lib)
		return;
	if (lib->cat)
		sqlite3_close(lib->cat);
	pthread_mutex_destroy(&lib->lock);
	free(lib->dir);
	free(lib);
}

const char *
st_library_dir(const struct st_library *lib)
{
	return lib->dir;
}

sqlite3 *
st_library_catalog(struct st_library *lib)
{
	return lib->cat;
}

bool
st_id_valid(const char *id)
{
	size_t i;

	if (!id || strlen(id) != ST_ID_LEN)
		return false;
	for (i = 0; i < ST_ID_LEN; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return true;
}

char *
st_library_trace_path(const struct st_library *lib, const char *id)
{
	return tc_xasprintf("%s/traces/%s.db", lib->dir, id);
}

char *
st_library_raw_path(const struct st_library *lib, const char *sha256)
{
	return tc_xasprintf("%s/raw/%s", lib->dir, sha256);
}

char *
st_library_tmp_path(const struct st_library *lib, const char *suffix)
{
	char rnd[17];

	tc_random_hex(rnd, 8);
	return tc_xasprintf("%s/tmp/%s%s", lib->dir, rnd, suffix ? suffix : "");
}

static const char *
st_basename(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* A new catalog row in state "queued"; its id in @id_out. */
static int
st_lib_insert(struct st_library *lib, const char *name, const char *tags, const char *hex,
	      int64_t size, char id_out[ST_ID_LEN + 1], struct tc_err *err)
{
	sqlite3_stmt *s = NULL;
	int64_t now = tc_now_ns();
	int rc;

	tc_random_hex(id_out, ST_ID_LEN / 2);
	pthread_mutex_lock(&lib->lock);
	rc = st_lib_prepare(lib, &s, "INSERT INTO traces (id, name, tags, status, progress,"
			    " sha256, size, created_ns, updated_ns) VALUES (?,?,?,'queued',0,?,?,?,?)",
			    err);
	if (!rc) {
		sqlite3_bind_text(s, 1, id_out, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, tags ? tags : "", -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, hex, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, size);
		sqlite3_bind_int64(s, 6, now);
		sqlite3_bind_int64(s, 7, now);
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = tc_err_set(err, -EIO, "catalog: %s", sqlite3_errmsg(lib->cat));
	}
	sqlite3_finalize(s);
	pthread_mutex_unlock(&lib->lock);
	if (rc < 0)
		id_out[0] = 0;
	return rc;
}

/* @src must be a regular file; *@st receives its status. */
static int
st_lib_stat_regular(const char *src, struct stat *st, struct tc_err *err)
{
	if (stat(src, st) < 0)
		return tc_err_set(err, -errno, "%s: %s", src, strerror(errno));
	if (!S_ISREG(st->st_mode))
		return tc_err_set(err, -EINVAL, "%s: not a regular file", src);
	return 0;
}

/*
 * Keep the complete, synced file @path as DATA/raw/<@hex>: renamed into
 * place, or unlinked when the same bytes are already kept; then sync raw/.
 * @path is consumed on success and left alone on failure.
 */
static int
st_lib_keep_raw(struct st_library *lib, const char *path, const char *hex, struct tc_err *err)
{
	char *raw = st_library_raw_path(lib, hex), *dir = NULL;
	int rc = 0;

	if (access(raw, F_OK) == 0) {
		unlink(path);		/* deduplicated */
	} else if (rename(path, raw) < 0) {
		rc = tc_err_set(err, -errno, "%s: %s", raw, strerror(errno));
		goto out;
	}
	dir = tc_xasprintf("%s/raw", lib->dir);
	tc_fsync_dir(dir);
out:
	free(raw);
	free(dir);
	return rc;
}

int
st_library_add_raw(struct st_library *lib, const char *src, bool move, const char *sha256,
		   const char *name, const char *tags, char id_out[ST_ID_LEN + 1],
		   struct tc_err *err)
{
	char hex[65], *raw = NULL, *tmp = NULL;
	struct stat st;
	int rc;

	rc = st_lib_stat_regular(src, &st, err);
	if (rc < 0)
		return rc;
	if (sha256) {
		snprintf(hex, sizeof(hex), "%s", sha256);
	} else {
		rc = tc_sha256_file(src, hex, err);
		if (rc < 0)
			return rc;
	}
	raw = st_library_raw_path(lib, hex);
	if (move) {
		rc = st_lib_keep_raw(lib, src, hex, err);
	} else if (access(raw, F_OK) != 0) {
		/* a copy, so that the caller's file is never renamed or half read */
		tmp = st_library_tmp_path(lib, ".raw");
		rc = tc_copy_file(src, tmp, NULL, err);
		if (!rc)
			rc = st_lib_keep_raw(lib, tmp, hex, err);
		if (rc < 0)
			unlink(tmp);
	}
	if (!rc)
		rc = st_lib_insert(lib, name && *name ? name : st_basename(src), tags, hex,
				   st.st_size, id_out, err);
	free(raw);
	free(tmp);
	return rc;
}

int
st_library_set_status(struct st_library *lib, const char *id, const char *status,
		      double progress, const char *error)
{
	sqlite3_stmt *s = NULL;
	int rc = 0;

	pthread_mutex_lock(&lib->lock);
	if (st_lib_prepare(lib, &s, "UPDATE traces SET status=?, progress=?, error=?,"
			   " updated_ns=? WHERE id=?", NULL) < 0) {
		rc = -EIO;
		goto out;
	}
	sqlite3_bind_text(s, 1, status, -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 2, progress);
	if (error)
		sqlite3_bind_text(s, 3, error, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 3);
	sqlite3_bind_int64(s, 4, tc_now_ns());
	sqlite3_bind_text(s, 5, id, -1, SQLITE_STATIC);
	if (sqlite3_step(s) != SQLITE_DONE)
		rc = -EIO;
	else if (sqlite3_changes(lib->cat) == 0)
		rc = -ENOENT;
out:
	sqlite3_finalize(s);
	pthread_mutex_unlock(&lib->lock);
	return rc;
}

int
st_library_requeue(struct st_library *lib, const char *id, struct tc_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc;

	pthread_mutex_lock(&lib->lock);
	rc = st_lib_prepare(lib, &s, "UPDATE traces SET status='queued', progress=0, error=NULL,"
			    " updated_ns=? WHERE id=? AND status='failed'", err);
	if (rc < 0)
		goto out;
	sqlite3_bind_int64(s, 1, tc_now_ns());
	sqlite3_bind_text(s, 2, id, -1, SQLITE_STATIC);
	if (sqlite3_step(s) != SQLITE_DONE) {
		rc = tc_err_set(err, -EIO, "catalog: %s", sqlite3_errmsg(lib->cat));
		goto out;
	}
	if (sqlite3_changes(lib->cat) == 1)
		goto out;
	sqlite3_finalize(s);
	s = NULL;
	rc = st_lib_prepare(lib, &s, "SELECT status FROM traces WHERE id=?", err);
	if (rc < 0)
		goto out;
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW)
		rc = tc_err_set(err, -EALREADY, "trace %s is %s", id,
				(const char *)sqlite3_column_text(s, 0));
	else
		rc = tc_err_set(err, -ENOENT, "no trace %s", id);
out:
	sqlite3_finalize(s);
	pthread_mutex_unlock(&lib->lock);
	return rc;
}

static int
st_library_sha(struct st_library *lib, const char *id, char hex[65], struct tc_err *err)
{
	sqlite3_stmt *s = NULL;
	int rc;

	pthread_mutex_lock(&lib->lock);
	rc = st_lib_prepare(lib, &s, "SELECT sha256 FROM traces WHERE id=?", err);
	if (!rc) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW)
			snprintf(hex, 65, "%s", (const char *)sqlite3_column_text(s, 0));
		else
			rc = tc_err_set(err, -ENOENT, "no trace %s", id);
	}
	sqlite3_finalize(s);
	pthread_mutex_unlock(&lib->lock);
	return rc;
}

/* Every @from in @err's message becomes @to. */
static void
st_msg_rename(struct tc_err *err, const char *from, const char *to)
{
	const char *p, *m = err->msg;
	size_t rl = strlen(from);
	struct tc_buf b;

	if (!rl || !strcmp(from, to))
		return;
	tc_buf_init(&b);
	while ((p = strstr(m, from))) {
		tc_buf_add(&b, m, (size_t)(p - m));
		tc_buf_adds(&b, to);
		m = p + rl;
	}
	tc_buf_adds(&b, m);
	snprintf(err->msg, sizeof(err->msg), "%s", b.data);
	tc_buf_free(&b);
}

/*
 * Readers name the file they read, which is DATA/raw/<sha256>; users know
 * the trace by the name it was uploaded or ingested under.
 */
static void
st_library_name_errors(struct st_library *lib, const char *id, const char *raw,
		       struct tc_err *err)
{
	sqlite3_stmt *s = NULL;

	pthread_mutex_lock(&lib->lock);
	if (st_lib_prepare(lib, &s, "SELECT name FROM traces WHERE id=?", NULL) == 0) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
			st_msg_rename(err, raw, (const char *)sqlite3_column_text(s, 0));
	}
	sqlite3_finalize(s);
	pthread_mutex_unlock(&lib->lock);
}

/*
 * An ingest's progress: the reader's share of its input goes to the writer
 * (st_writer_reading()), which adds the finish phases and calls
 * st_library_phase(): the catalog row (when there is one yet) and the
 * caller's function.
 */
struct st_prog {
	struct st_library *lib;
	const char *id;		/* NULL: no catalog row yet */
	st_phase_fn fn;
	void *ctx;
	int64_t last_ns;
};

static int
st_library_phase(void *ctx, const struct st_progress *r)
{
	struct st_prog *p = ctx;
	int64_t now = tc_mono_ns();

	if (p->id && now - p->last_ns > 200000000) {	/* at most 5 catalog writes/s */
		p->last_ns = now;
		st_library_set_status(p->lib, p->id, "ingesting", r->frac, NULL);
	}
	return p->fn ? p->fn(p->ctx, r) : 0;
}

/* Open the writer *@w of an ingest at @path, its progress going to @prog. */
static int
st_library_writer(struct st_writer **w, struct st_prog *prog, const char *path,
		  struct tc_err *err)
{
	int rc = st_writer_open(w, path, err);

	if (rc == 0)
		st_writer_set_progress(*w, st_library_phase, prog);
	return rc;
}

/* The format the reader recorded in the store's meta (malloc'd), or NULL. */
static char *
st_writer_format(struct st_writer *w)
{
	sqlite3_stmt *m;
	char *fmt = NULL;

	if (sqlite3_prepare_v2(st_writer_db(w), "SELECT value FROM meta WHERE key='format'", -1,
			       &m, NULL) == SQLITE_OK) {
		if (sqlite3_step(m) == SQLITE_ROW && sqlite3_column_text(m, 0))
			fmt = tc_xstrdup((const char *)sqlite3_column_text(m, 0));
		sqlite3_finalize(m);
	}
	return fmt;
}

/* Rename the finished store @tmp into traces/ and mark row @id ready. */
static int
st_lib_publish(struct st_library *lib, const char *id, const char *tmp, const char *fmt,
	       const struct st_stats *stats, struct tc_err *err)
{
	char *dst = st_library_trace_path(lib, id), *dir = NULL, *json = NULL;
	sqlite3_stmt *s = NULL;
	int rc;

	if (rename(tmp, dst) < 0) {
		rc = tc_err_set(err, -errno, "%s: %s", dst, strerror(errno));
		unlink(tmp);
		goto out;
	}
	dir = tc_xasprintf("%s/traces", lib->dir);
	tc_fsync_dir(dir);
	json = st_stats_to_json_text(stats);
	pthread_mutex_lock(&lib->lock);
	rc = st_lib_prepare(lib, &s, "UPDATE traces SET status='ready', progress=1, error=NULL,"
			    " format=?, stats=?, updated_ns=? WHERE id=?", err);
	if (!rc) {
		sqlite3_bind_text(s, 1, fmt ? fmt : "unknown", -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, json, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, tc_now_ns());
		sqlite3_bind_text(s, 4, id, -1, SQLITE_STATIC);
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = tc_err_set(err, -EIO, "catalog: %s", sqlite3_errmsg(lib->cat));
	}
	sqlite3_finalize(s);
	pthread_mutex_unlock(&lib->lock);
out:
	free(dst);
	free(dir);
	free(json);
	return rc;
}

static void *
st_lib_warm_thread(void *arg)
{
	char *path = arg;	/* owned */

	tc_thread_name("store-warm");
	st_vfs_warm(path);
	free(path);
	return NULL;
}

void
st_library_warm(struct st_library *lib, const char *id)
{
	char *path = st_library_trace_path(lib, id);
	pthread_attr_t at;
	pthread_t t;
	int rc;

	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &at, st_lib_warm_thread, path);
	pthread_attr_destroy(&at);
	if (rc)
		free(path);
}

/*
 * A full disk shows up as whichever write hit it first (the raw copy, a
 * staging spill, SQLite's "database or disk is full"), each naming a
 * temporary file of DATA/tmp/.  Say instead what the user can act on: the
 * file, the data directory and the room left there.
 */
static void
st_msg_no_space(struct st_library *lib, struct tc_err *err, const char *shown, uint64_t size,
		const char *what)
{
	struct statvfs vs;
	char room[32] = "?", sz[32] = "";

	if (err->code != -ENOSPC && !strstr(err->msg, "No space left") &&
	    !strstr(err->msg, "disk is full"))
		return;
	if (statvfs(lib->dir, &vs) == 0)
		tc_human_bytes((uint64_t)vs.f_bavail * vs.f_frsize, room, sizeof(room));
	if (size)
		tc_human_bytes(size, sz, sizeof(sz));
	err->code = -ENOSPC;
	snprintf(err->msg, sizeof(err->msg), "%s%s%s%s: no space left in %s %s (%s free there now)",
		 shown, size ? " (" : "", sz, size ? ")" : "", lib->dir, what, room);
}

int
st_library_ingest(struct st_library *lib, const char *id, st_phase_fn progress, void *ctx,
		  struct st_stats *stats, struct tc_err *err)
{
	struct st_prog prog = { .lib = lib, .id = id, .fn = progress, .ctx = ctx };
	struct ing_opts opts = { .progress = st_writer_reading };
	char hex[65], *raw = NULL, *tmp = NULL;
	struct st_writer *w = NULL;
	struct st_stats local;
	const char *fmt = NULL;
	int rc;

	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	rc = st_library_sha(lib, id, hex, err);
	if (rc < 0)
		return rc;
	st_library_set_status(lib, id, "ingesting", 0, NULL);
	raw = st_library_raw_path(lib, hex);
	tmp = st_library_tmp_path(lib, ".db");
	rc = st_library_writer(&w, &prog, tmp, err);
	if (rc < 0)
		goto out;
	opts.ctx = w;
	rc = ing_file(w, raw, &opts, err);
	if (rc < 0) {
		st_writer_abort(w);
		goto out;
	}
	fmt = st_writer_format(w);
	rc = st_writer_finish(w, stats, err);
	if (rc < 0)
		goto out;
	rc = st_lib_publish(lib, id, tmp, fmt, stats, err);
out:
	if (rc == -ECANCELED) {
		/* not the trace's fault: it is ingested again when asked
		 * (a server ingests its queued traces when it starts) */
		st_library_set_status(lib, id, "queued", 0, NULL);
	} else if (rc < 0 && err) {
		st_library_name_errors(lib, id, raw, err);
		st_msg_no_space(lib, err, "its upload", 0, "for its trace store");
		st_library_set_status(lib, id, "failed", 0, err->msg);
	}
	free((char *)fmt);
	free(raw);
	free(tmp);
	return rc;
}

/* The raw copy of st_library_add_ingest(), in its own thread. */
struct st_rawjob {
	const char *src, *dst;
	char hex[65];
	int rc;
	struct tc_err err;
};

static void *
st_rawjob_run(void *arg)
{
	struct st_rawjob *j = arg;

	tc_thread_name("raw-copy");
	/* the digest of the bytes kept, so the name is right whatever happens to src */
	j->rc = tc_copy_file(j->src, j->dst, j->hex, &j->err);
	return NULL;
}

/*
 * The same order as st_library_add_raw() + st_library_ingest() for what is
 * published: raw copy complete + fsync -> rename into raw/ -> fsync raw/ ->
 * catalog row -> store renamed into traces/ -> fsync traces/ -> row "ready".
 * Only the work before publishing overlaps: the copy and its digest (about
 * 0.6 s of CPU for a 1 GB file here, tc-copy.c) run while the reader parses
 * the original.
 */
int
st_library_add_ingest(struct st_library *lib, const char *src, const char *name,
		      const char *tags, st_phase_fn progress, void *ctx,
		      char id_out[ST_ID_LEN + 1], struct st_stats *stats, struct tc_err *err)
{
	const char *shown = name && *name ? name : st_basename(src);
	char *rawtmp = NULL, *dbtmp = NULL, *fmt = NULL;
	struct st_prog prog = { .lib = lib, .fn = progress, .ctx = ctx };
	struct ing_opts opts = { .progress = st_writer_reading };
	struct st_rawjob job = { 0 };
	struct st_writer *w = NULL;
	struct st_stats local;
	struct stat st, st2;
	bool thr_on = false, raw_kept = false;
	pthread_t thr;
	int rc;

	id_out[0] = 0;
	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	rc = st_lib_stat_regular(src, &st, err);
	if (rc < 0)
		return rc;
	rawtmp = st_library_tmp_path(lib, ".raw");
	dbtmp = st_library_tmp_path(lib, ".db");
	job.src = src;
	job.dst = rawtmp;
	if (pthread_create(&thr, NULL, st_rawjob_run, &job) == 0)
		thr_on = true;
	else
		st_rawjob_run(&job);	/* no thread: one after the other */
	rc = st_library_writer(&w, &prog, dbtmp, err);
	if (rc < 0)
		goto out;
	opts.ctx = w;
	rc = ing_file(w, src, &opts, err);
	if (rc < 0) {
		st_writer_abort(w);
		goto out;
	}
	fmt = st_writer_format(w);
	rc = st_writer_finish(w, stats, err);
	if (rc < 0)
		goto out;
	if (thr_on)
		pthread_join(thr, NULL);
	thr_on = false;
	if (job.rc < 0) {
		rc = job.rc;
		*err = job.err;
		goto out;
	}
	if (stat(src, &st2) < 0 || st2.st_size != st.st_size ||
	    st2.st_mtim.tv_sec != st.st_mtim.tv_sec || st2.st_mtim.tv_nsec != st.st_mtim.tv_nsec) {
		rc = tc_err_set(err, -EAGAIN, "%s: the file changed while it was ingested", src);
		goto out;
	}
	rc = st_lib_keep_raw(lib, rawtmp, job.hex, err);
	if (rc < 0)
		goto out;
	raw_kept = true;
	rc = st_lib_insert(lib, shown, tags, job.hex, st.st_size, id_out, err);
	if (rc < 0)
		goto out;
	rc = st_lib_publish(lib, id_out, dbtmp, fmt, stats, err);
out:
	if (thr_on)
		pthread_join(thr, NULL);
	if (rc < 0) {
		if (!raw_kept)
			unlink(rawtmp);
		unlink(dbtmp);
		st_msg_rename(err, src, shown);
		st_msg_no_space(lib, err, shown, (uint64_t)st.st_size, "to keep it and its trace store");
		if (id_out[0])
			st_library_set_status(lib, id_out, "failed", 0, err->msg);
	}
	free(rawtmp);
	free(dbtmp);
	free(fmt);
	return rc;
}

int
st_library_delete(struct st_library *lib, const char *id, struct tc_err *err)
{
	char hex[65], *path = NULL;
	sqlite3_stmt *s = NULL;
	int rc, refs = 0;

	rc = st_library_sha(lib, id, hex, err);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&lib->lock);
	rc = st_lib_prepare(lib, &s, "DELETE FROM traces WHERE id=?", err);
	if (!rc) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = tc_err_set(err, -EIO, "catalog: %s", sqlite3_errmsg(lib->cat));
	}
	sqlite3_finalize(s);
	s = NULL;
	if (!rc && !st_lib_prepare(lib, &s, "SELECT count(*) FROM traces WHERE sha256=?", NULL)) {
		sqlite3_bind_text(s, 1, hex, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW)
			refs = sqlite3_column_int(s, 0);
	}
	sqlite3_finalize(s);
	pthread_mutex_unlock(&lib->lock);
	if (rc < 0)
		return rc;
	path = st_library_trace_path(lib, id);
	unlink(path);
	free(path);
	if (!refs) {
		path = st_library_raw_path(lib, hex);
		unlink(path);
		free(path);
	}
	return 0;
}

/*
 * PRAGMA user_version of a trace store, read from the file header (4 bytes,
 * big-endian, at offset 60 of every SQLite database) rather than by opening
 * it: start-up checks every ready trace.  -ENOENT when there is no such
 * file, -1 when it cannot be read.
 */
static int
st_trace_version(const char *path)
{
	unsigned char h[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC), v = -1;

	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -1;
	if (pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    !memcmp(h, "SQLite format 3", 16))
		v = (int)((uint32_t)h[60] << 24 | (uint32_t)h[61] << 16 | (uint32_t)h[62] << 8 |
			  h[63]);
	close(fd);
	return v;
}

/*
 * Ready traces whose store an older build wrote (a lower schema version),
 * or whose store file is gone (a backup restored without DATA/traces), go
 * back to the queue: the raw file is kept, so re-ingesting rebuilds them in
 * this build's layout.  One whose raw file is gone as well is marked failed
 * with why, not left "ready" with nothing to read.  A catalog that cannot
 * be read through is said on stderr and the rest served.  Called with
 * lib->lock held.
 */
static int
st_lib_requeue_old(struct st_library *lib, struct tc_err *err)
{
	sqlite3_stmt *s = NULL, *u = NULL, *f = NULL;
	int rc, sr = SQLITE_DONE;

	rc = st_lib_prepare(lib, &s, "SELECT id, sha256 FROM traces WHERE status='ready'", err);
	if (!rc)
		rc = st_lib_prepare(lib, &u, "UPDATE traces SET status='queued', progress=0"
				    " WHERE id=?1", err);
	if (!rc)
		rc = st_lib_prepare(lib, &f, "UPDATE traces SET status='failed', error=?2"
				    " WHERE id=?1", err);
	while (!rc && (sr = sqlite3_step(s)) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(s, 0);
		const char *sha = (const char *)sqlite3_column_text(s, 1);
		sqlite3_stmt *st = u;
		char *path;
		int v;

		if (!id || !st_id_valid(id))
			continue;
		path = st_library_trace_path(lib, id);
		v = st_trace_version(path);
		free(path);
		if (v == -ENOENT) {
			path = sha ? st_library_raw_path(lib, sha) : NULL;
			if (!path || access(path, R_OK)) {
				st = f;
				sqlite3_bind_text(f, 2, "the trace store and its raw file are both "
						  "missing: upload the trace again", -1,
						  SQLITE_STATIC);
			}
			free(path);
		} else if (v < 0 || v >= ST_TRACE_SCHEMA_VERSION) {
			continue;
		}
		sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = tc_err_set(err, -EIO, "catalog: %s", sqlite3_errmsg(lib->cat));
		sqlite3_reset(st);
	}
	if (!rc && sr != SQLITE_DONE)	/* a damaged catalog: serve what reads */
		fprintf(stderr, "neuron-explorer: catalog: cannot check every ready trace's store "
			"(%s); starting with the others\n", sqlite3_errmsg(lib->cat));
	sqlite3_finalize(s);
	sqlite3_finalize(u);
	sqlite3_finalize(f);
	return rc;
}

int
st_library_recover(struct st_library *lib, struct tc_err *err)
{
	char *tmpdir = tc_xasprintf("%s/tmp", lib->dir);
	sqlite3_stmt *s = NULL;
	struct dirent *de;
	DIR *d;
	int rc, n = 0;

	d = opendir(tmpdir);
	if (d) {
		while ((de = readdir(d))) {
			char *p;

			if (de->d_name[0] == '.')
				continue;
			p = tc_xasprintf("%s/%s", tmpdir, de->d_name);
			unlink(p);
			free(p);
		}
		closedir(d);
	}
	free(tmpdir);
	pthread_mutex_lock(&lib->lock);
	rc = st_exec(lib->cat, "UPDATE traces SET status='queued', progress=0"
		     " WHERE status IN ('ingesting', 'queued')", err);
	if (!rc)
		rc = st_lib_requeue_old(lib, err);
	if (!rc && !st_lib_prepare(lib, &s, "SELECT count(*) FROM traces WHERE status='queued'",
				   err)) {
		if (sqlite3_step(s) == SQLITE_ROW)
			n = sqlite3_column_int(s, 0);
	}
	sqlite3_finalize(s);
	pthread_mutex_unlock(&lib->lock);
	return rc < 0 ? rc : n;
}
