/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-vfs.c - the "nx-map" VFS (store/st-vfs.c) on a real SQLite
 * file: a read-only connection through it reads what one through the
 * default VFS reads, from its map beyond the part SQLite maps itself (set
 * to 64 KB here, as Debian's build caps it at 2 GB), and still sees rows
 * another connection adds after the file was mapped (read past the map).
 * And "nx-direct" (store/st-vfs-direct.c), through which the writer builds
 * a store: a table built and changed through it holds, read back from the
 * file, what the default VFS wrote.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/store-int.h"
#include "tests/tap.h"

#define ROWS 600
#define BLOB 5000	/* overflow pages at 4 KB a page */

/* "count|sum of lengths|a hash of every byte" of table t, or NULL on error (malloc'd). */
static char *
digest(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	uint64_t h = 1469598103934665603ull, n = 0, len = 0;
	char *out = NULL;

	if (sqlite3_prepare_v2(db, "SELECT b FROM t ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *p = sqlite3_column_blob(st, 0);
		int k = sqlite3_column_bytes(st, 0);

		for (int i = 0; i < k; i++)
			h = (h ^ p[i]) * 1099511628211ull;
		n++;
		len += (uint64_t)k;
	}
	if (sqlite3_finalize(st) == SQLITE_OK)
		out = tc_xasprintf("%llu|%llu|%016llx", (unsigned long long)n,
				   (unsigned long long)len, (unsigned long long)h);
	return out;
}

static int
add_rows(sqlite3 *db, int from, int to)
{
	sqlite3_stmt *st = NULL;
	unsigned char *b = tc_xmalloc(BLOB);
	int rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?, ?)", -1, &st, NULL);
	for (int i = from; i < to && rc == SQLITE_OK; i++) {
		for (int j = 0; j < BLOB; j++)
			b[j] = (unsigned char)(i * 31 + j * 7 + (j >> 8));
		sqlite3_bind_int(st, 1, i);
		sqlite3_bind_blob(st, 2, b, BLOB - i % 97, SQLITE_STATIC);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	free(b);
	return rc == SQLITE_OK ? sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) : rc;
}

/* Whether @r reads table t as @w does (@what), and if @mapped, mostly from nx-map's map. */
static void
same(sqlite3 *r, sqlite3 *w, bool mapped, const char *what)
{
	uint64_t before = st_vfs_mapped_reads();
	char *got = digest(r), *want = digest(w);

	is_str(got ? got : "(error)", want ? want : "(error)", what);
	if (mapped)
		ok(st_vfs_mapped_reads() - before > ROWS, "%s: from the map (%llu page reads)", what,
		   (unsigned long long)(st_vfs_mapped_reads() - before));
	free(got);
	free(want);
}

int
main(void)
{
	char dir[] = "/tmp/nx-vfs-XXXXXX";
	sqlite3 *w = NULL, *r = NULL, *d = NULL;
	char *path, *dpath;
	int rc;

	if (!mkdtemp(dir))
		return 1;
	path = tc_xasprintf("%s/t.db", dir);
	ok(st_vfs_name() && !strcmp(st_vfs_name(), "nx-map"), "the VFS registers as nx-map");
	rc = sqlite3_open(path, &w);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(w, "PRAGMA page_size=4096; CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)",
				  NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = add_rows(w, 0, ROWS);
	is_int(rc, SQLITE_OK, "a 3 MB table written through the default VFS");

	rc = sqlite3_open_v2(path, &r, SQLITE_OPEN_READONLY, st_vfs_name());
	is_int(rc, SQLITE_OK, "opened read-only through nx-map");
	/* SQLite maps 64 KB itself: the rest is read through the VFS */
	sqlite3_exec(r, "PRAGMA mmap_size=65536", NULL, NULL, NULL);
	same(r, w, true, "every row and byte read as the default VFS reads them");
	/* the file grows past the map: those pages come from the default VFS */
	is_int(add_rows(w, ROWS, 2 * ROWS), SQLITE_OK, "as many rows again added by the writer");
	same(r, w, false, "and read through nx-map, past its map");
	/* without SQLite's own map: plain reads, copied from ours */
	sqlite3_exec(r, "PRAGMA mmap_size=0", NULL, NULL, NULL);
	same(r, w, true, "the same with SQLite's mmap off");
	is_int(sqlite3_close(r), SQLITE_OK, "the reader closes (its map with it)");

	/* nx-direct, the writer's VFS: the same table, built and changed with
	 * a cache of 8 pages (SQLite spills pages all the time), then read from
	 * the file through the default VFS */
	dpath = tc_xasprintf("%s/d.db", dir);
	rc = sqlite3_open_v2(dpath, &d, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			     st_vfs_direct_name());
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(d, "PRAGMA journal_mode=OFF; PRAGMA page_size=32768;"
				  " PRAGMA cache_size=8;"
				  " CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = add_rows(d, 0, 2 * ROWS);
	is_int(rc, SQLITE_OK, "the table written again through nx-direct");
	for (int i = 0; i < 2; i++) {
		sqlite3 *x = i ? d : w;

		rc = sqlite3_exec(x, "BEGIN; DELETE FROM t WHERE id % 7 = 3;"
				  " UPDATE t SET b = substr(b, 100) WHERE id % 5 = 1;"
				  " UPDATE t SET b = b || b WHERE id % 11 = 2; COMMIT;", NULL, NULL, NULL);
		is_int(rc, SQLITE_OK, i ? "  and changed through nx-direct" : "  changed the same way");
	}
	is_int(st_vfs_settle(d, dpath, NULL), 0, "  settled");
	is_int(sqlite3_close(d), SQLITE_OK, "  closed");
	d = NULL;
	rc = sqlite3_open_v2(dpath, &d, SQLITE_OPEN_READONLY, NULL);
	is_int(rc, SQLITE_OK, "  reopened through the default VFS");
	same(d, w, false, "  the same rows and bytes as the default VFS wrote");
	{
		sqlite3_stmt *st = NULL;

		sqlite3_prepare_v2(d, "PRAGMA integrity_check", -1, &st, NULL);
		is_str(sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) :
			"(none)", "ok", "  and its integrity check passes");
		sqlite3_finalize(st);
	}
	sqlite3_close(d);
	unlink(dpath);
	free(dpath);
	sqlite3_close(w);

	/* a file that is not there: the default VFS's error */
	r = NULL;
	rc = sqlite3_open_v2("/nonexistent/dir/t.db", &r, SQLITE_OPEN_READONLY, st_vfs_name());
	is_int(rc, SQLITE_CANTOPEN, "a missing file cannot be opened");
	sqlite3_close(r);

	unlink(path);
	rmdir(dir);
	free(path);
	return tap_done();
}
