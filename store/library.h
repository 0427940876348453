/* SPDX-License-Identifier: MIT */
/*
 * store/library.h - the library of traces in a data directory:
 *
 *   DATA/catalog.db           the catalog (schemas/catalog.sql)
 *   DATA/raw/<sha256>         original uploads, content-addressed
 *   DATA/traces/<id>.db       one finished trace store per trace
 *   DATA/tmp/                 partial files; removed at start-up
 *
 * A trace row moves queued -> ingesting -> ready | failed.  Publishing is
 * rename(2) of a complete file plus a catalog update in one transaction, so a
 * crash leaves either no trace or a whole one.
 */
#ifndef ST_LIBRARY_H
#define ST_LIBRARY_H

#include <stdint.h>
#include <sqlite3.h>
#include "common/tc.h"
#include "store/store.h"

#define ST_ID_LEN 16	/* hex chars in a trace id */

struct st_library;

/** st_library_open - open (creating, migrating) DATA; 0 or -errno. */
int st_library_open(struct st_library **lib, const char *data_dir, struct tc_err *err);
void st_library_close(struct st_library *lib);
const char *st_library_dir(const struct st_library *lib);
/** st_library_catalog - the catalog connection (owned by @lib; one thread at a time). */
sqlite3 *st_library_catalog(struct st_library *lib);

/** st_library_trace_path - "DATA/traces/<id>.db" (malloc'd). */
char *st_library_trace_path(const struct st_library *lib, const char *id);
/** st_library_raw_path - "DATA/raw/<sha256>" (malloc'd). */
char *st_library_raw_path(const struct st_library *lib, const char *sha256);
/** st_library_tmp_path - a fresh unique path under DATA/tmp (malloc'd). */
char *st_library_tmp_path(const struct st_library *lib, const char *suffix);

/** st_id_valid - whether @id is a well-formed trace id (never a path). */
bool st_id_valid(const char *id);

/**
 * st_library_add_raw - move (rename) or copy a complete raw file into the
 * content-addressed raw store and create a catalog row in state "queued".
 * @src_path: the file; moved when @move is true (same file system), else copied.
 * @sha256:   its hex digest when already known (the server hashes while
 *            streaming), else NULL to compute it.
 * @name, @tags: may be NULL.
 * @id_out:   the new trace id (ST_ID_LEN + 1 bytes).
 * Return: 0 or -errno with @err set.
 */
int st_library_add_raw(struct st_library *lib, const char *src_path, bool move,
		       const char *sha256, const char *name, const char *tags,
		       char id_out[ST_ID_LEN + 1], struct tc_err *err);

/**
 * st_library_ingest - ingest the raw file of trace @id: detect the format by
 * content, parse into a temporary store, finish, rename into place and mark
 * the catalog row ready (with stats) or failed (with the message).
 * @progress: may be NULL; else called with @ctx on this thread as the
 *            ingest goes through its phases (store.h); the catalog row's
 *            progress follows the same fraction, at most 5 writes a second.
 *            When it cancels the ingest, the row goes back to "queued"
 *            (no error) and -ECANCELED is returned.
 * @stats: out, may be NULL.
 * Return: 0 or -errno with @err set.
 */
int st_library_ingest(struct st_library *lib, const char *id, st_phase_fn progress,
		      void *ctx, struct st_stats *stats, struct tc_err *err);

/**
 * st_library_warm - start reading the store of trace @id into the page
 * cache, in a detached thread, and return: its file was written around
 * the page cache (store/st-vfs-direct.c), so without this the first
 * queries after an ingest wait for the disk.  For the server, which keeps
 * running; nothing when the thread cannot be started.
 */
void st_library_warm(struct st_library *lib, const char *id);

/**
 * st_library_add_ingest - st_library_add_raw() (copy, sha256 computed) and
 * st_library_ingest() in one call, for a local file: the copy into DATA/raw
 * and its sha256 run in a second thread while the reader parses @src_path
 * itself.  The catalog row is created only once both are complete (state
 * "ready"); on failure nothing is left in the library.  @src_path must not
 * change meanwhile (its size and mtime are checked at the end).
 * @name, @tags, @stats: may be NULL.
 * @progress: may be NULL; else the ingest's phases, as st_library_ingest().
 * @id_out:   the new trace id (ST_ID_LEN + 1 bytes), "" when no row was made.
 * Return: 0 or -errno with @err set.
 */
int st_library_add_ingest(struct st_library *lib, const char *src_path, const char *name,
			  const char *tags, st_phase_fn progress, void *ctx,
			  char id_out[ST_ID_LEN + 1], struct st_stats *stats, struct tc_err *err);

/** st_library_set_status - update status/progress/error of a trace row. */
int st_library_set_status(struct st_library *lib, const char *id, const char *status,
			  double progress, const char *error);

/**
 * st_library_requeue - put trace @id, whose ingest failed, back to "queued"
 * (its raw file was kept), in one statement, so two callers cannot both.
 * Return: 0, -ENOENT (no such trace), -EALREADY (it is not failed; @err says
 * its status) or -EIO.
 */
int st_library_requeue(struct st_library *lib, const char *id, struct tc_err *err);

/** st_library_delete - remove the catalog row and the trace db; the raw
 * file goes too when no other trace refers to it. 0, -ENOENT or -errno. */
int st_library_delete(struct st_library *lib, const char *id, struct tc_err *err);

/**
 * st_library_recover - at start-up: remove DATA/tmp/ leftovers, and return
 * every trace that is queued or was ingesting (crash) back to "queued".
 * Return: number of traces to (re)ingest, or -errno.
 */
int st_library_recover(struct st_library *lib, struct tc_err *err);

#endif /* ST_LIBRARY_H */
