/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-vfs-direct.c - the files of "nx-direct"
 * (store/st-vfs-direct.c) on real files: a seeded run of writes (whole
 * pages near a moving front, as SQLite spills them, pages written again,
 * writes of any size at any offset), reads, truncates, syncs and size
 * queries against the same operations on a copy in memory; every read and,
 * at the end, the file's bytes must equal the copy.  Then a write error
 * (RLIMIT_FSIZE): kept, reported by the settle call and by SQL, never
 * lost; reads waiting for the batch in flight exactly where they overlap
 * it; st_vfs_warm() putting a directly written file in the page cache;
 * then NX_STORE_DIRECT=0 and a file system without O_DIRECT.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "store/store-int.h"
#include "tests/tap.h"

#define MAXSZ ((size_t)12 << 20)
#define OPS 30000

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? rng % n : 0;
}

static sqlite3_vfs *
dvfs(void)
{
	return sqlite3_vfs_find(st_vfs_direct_name());
}

/* A main database file @path opened through nx-direct (free() it after xClose). */
static sqlite3_file *
dopen(const char *path)
{
	sqlite3_vfs *v = dvfs();
	sqlite3_file *f = tc_xcalloc(1, (size_t)v->szOsFile);
	int out = 0;

	if (v->xOpen(v, path, f, SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_READWRITE |
		     SQLITE_OPEN_CREATE, &out) != SQLITE_OK) {
		free(f);
		return NULL;
	}
	return f;
}

static void
fill(uint8_t *p, size_t n)
{
	uint64_t x = rnd(UINT64_MAX);

	for (size_t i = 0; i < n; i++, x = x * 6364136223846793005ull + 1442695040888963407ull)
		p[i] = (uint8_t)(x >> 56);
}

/* The model run on @path; @direct: whether nx-direct took the file. */
static void
model(const char *path, bool expect_direct)
{
	uint8_t *shadow = tc_xcalloc(1, MAXSZ), *buf = tc_xmalloc(1 << 17);
	size_t size = 0, front = 0;
	long bad_reads = 0, bad_sizes = 0, bad_rc = 0, writes = 0, reads = 0;
	sqlite3_file *f = dopen(path);
	struct stat st;
	int fd, e = -1;

	ok(f != NULL, "a file opens through nx-direct");
	if (!f)
		return;
	ok((f->pMethods->iVersion == 1) == expect_direct, "the direct writes are %s",
	   expect_direct ? "on" : "off");
	for (int op = 0; op < OPS; op++) {
		unsigned r = (unsigned)rnd(100);
		size_t page = op < OPS / 2 ? 32768 : 4096, off, n;

		if (r < 70) {	/* a whole page near the front, or one written before */
			size_t pg = front / page + rnd(24);

			if (rnd(10) == 0)
				pg = rnd(front / page + 1);
			off = pg * page;
			n = page;
			if (off + n > MAXSZ)
				continue;
			if (off + n > front)
				front = off + n;
		} else if (r < 76) {	/* any size anywhere */
			n = 1 + rnd(9000);
			off = rnd(size + 4096);
			if (off + n > MAXSZ)
				continue;
		} else {
			off = 0;
			n = 0;
		}
		if (n) {
			fill(buf, n);
			if (f->pMethods->xWrite(f, buf, (int)n, (sqlite3_int64)off) != SQLITE_OK)
				bad_rc++;
			memcpy(shadow + off, buf, n);
			size = off + n > size ? off + n : size;
			writes++;
		} else if (r < 92) {	/* read, maybe past the end */
			n = 1 + rnd(page * 2);
			off = rnd(size + 1);
			int rc = f->pMethods->xRead(f, buf, (int)n, (sqlite3_int64)off);
			size_t have = off < size ? TC_MIN(n, size - off) : 0;
			uint8_t zero[1] = { 0 };
			bool same = !memcmp(buf, shadow + off, have);

			for (size_t i = have; i < n && same; i++)
				same = buf[i] == zero[0];
			if (rc != (have == n ? SQLITE_OK : SQLITE_IOERR_SHORT_READ) || !same)
				bad_reads++;
			reads++;
		} else if (r < 96) {
			sqlite3_int64 sz = -1;

			if (f->pMethods->xFileSize(f, &sz) != SQLITE_OK || sz != (sqlite3_int64)size)
				bad_sizes++;
		} else if (r < 98) {	/* truncate: mostly shorter, now and then longer */
			size_t to = rnd(10) ? rnd(size + 1) : size + rnd(100000);

			if (to > MAXSZ)
				continue;
			if (f->pMethods->xTruncate(f, (sqlite3_int64)to) != SQLITE_OK)
				bad_rc++;
			if (to < size)
				memset(shadow + to, 0, size - to);
			size = to;
			front = TC_MIN(front, to);
		} else if (f->pMethods->xSync(f, SQLITE_SYNC_NORMAL) != SQLITE_OK) {
			bad_rc++;
		}
	}
	ok(bad_rc == 0, "%ld writes, truncates and syncs succeed (%ld failed)", writes, bad_rc);
	ok(bad_reads == 0, "%ld reads give the bytes last written, zeros past the end (%ld not)",
	   reads, bad_reads);
	ok(bad_sizes == 0, "the size counts what is not written yet (%ld wrong)", bad_sizes);
	is_int(f->pMethods->xFileControl(f, ST_FCNTL_SETTLE, &e),
	       expect_direct ? SQLITE_OK : SQLITE_NOTFOUND, "settled");
	is_int(e, expect_direct ? 0 : -1, "  without an error");
	is_int(f->pMethods->xClose(f), SQLITE_OK, "closed");
	free(f);

	fd = open(path, O_RDONLY);
	ok(fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_size == size,
	   "the file is %zu bytes long", size);
	{
		uint8_t *got = tc_xcalloc(1, size + 1);
		ssize_t k = fd >= 0 ? pread(fd, got, size, 0) : -1;

		ok(k == (ssize_t)size && !memcmp(got, shadow, size), "and holds the bytes written");
		free(got);
	}
	if (fd >= 0)
		close(fd);
	free(shadow);
	free(buf);
}

/* A write the file system refuses (past RLIMIT_FSIZE): reported, and kept. */
static void
write_error(const char *dir)
{
	char *path = tc_xasprintf("%s/efbig.db", dir), *dbp = tc_xasprintf("%s/efbig2.db", dir);
	struct rlimit old, lim = { .rlim_cur = 1 << 20, .rlim_max = RLIM_INFINITY };
	uint8_t *page = tc_xcalloc(1, 32768), b[16];
	sqlite3_file *f = dopen(path);
	struct tc_err err = { 0 };
	sqlite3 *db = NULL;
	int e = 0, rc, commit;

	getrlimit(RLIMIT_FSIZE, &old);
	lim.rlim_max = old.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	if (!f || f->pMethods->iVersion != 1 || setrlimit(RLIMIT_FSIZE, &lim) < 0) {
		ok(1, "# SKIP no direct writes here, or no RLIMIT_FSIZE");
		goto out;
	}
	for (int i = 0; i < 64; i++)	/* 2 MiB: gathered, then refused past 1 MiB */
		f->pMethods->xWrite(f, page, 32768, (sqlite3_int64)i * 32768);
	rc = f->pMethods->xFileControl(f, ST_FCNTL_SETTLE, &e);
	is_int(rc, SQLITE_IOERR_WRITE, "a refused write fails the settle call");
	is_int(e, EFBIG, "  with its errno (EFBIG)");
	is_int(f->pMethods->xWrite(f, page, 32768, 0), SQLITE_IOERR_WRITE,
	       "  later writes fail");
	is_int(f->pMethods->xRead(f, b, 16, 0), SQLITE_IOERR_READ, "  and reads");
	is_int(f->pMethods->xSync(f, 0), SQLITE_IOERR_FSYNC, "  and syncs");
	f->pMethods->xClose(f);
	free(f);
	f = NULL;

	/* through SQL, as st_writer builds a store */
	rc = sqlite3_open_v2(dbp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			     st_vfs_direct_name());
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA cache_size=-1024;"
				  " PRAGMA page_size=32768; CREATE TABLE t(b BLOB); BEGIN;"
				  " WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
				  " WHERE i < 100) INSERT INTO t SELECT randomblob(40000) FROM n;",
				  NULL, NULL, NULL);
	commit = rc == SQLITE_OK ? sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) : rc;
	rc = commit == SQLITE_OK ? st_vfs_settle(db, dbp, &err) : -EIO;
	ok(commit != SQLITE_OK || rc == -EFBIG, "a 4 MB table past a 1 MiB limit fails: %s",
	   commit != SQLITE_OK ? sqlite3_errmsg(db) : err.msg);
	ok(commit != SQLITE_OK || strstr(err.msg, "cannot write the store"),
	   "  the settle call names the store");
	sqlite3_close(db);
out:
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, SIG_DFL);
	if (f && f->pMethods)
		f->pMethods->xClose(f);
	free(f);
	unlink(path);
	unlink(dbp);
	free(path);
	free(dbp);
	free(page);
}

/* Reads wait for the batch in flight only where they overlap it. */
static void
inflight(const char *dir)
{
	char *path = tc_xasprintf("%s/inflight.db", dir);
	uint8_t *page = tc_xmalloc(32768), got[100];
	sqlite3_file *f = dopen(path);
	uint64_t b, w, w0, w1, w2, w3;
	int rc;

	if (!f || f->pMethods->iVersion != 1) {
		ok(1, "# SKIP no direct writes here");
		goto out;
	}
	for (int i = 0; i <= 64; i++) {	/* page 64 sends pages 0-63 (2 MiB) */
		memset(page, i, 32768);
		f->pMethods->xWrite(f, page, 32768, (sqlite3_int64)i * 32768);
	}
	st_vfs_direct_usage(&b, &w, &w0);
	rc = f->pMethods->xRead(f, got, 100, 70 * 32768);
	st_vfs_direct_usage(&b, &w, &w1);
	ok(rc == SQLITE_IOERR_SHORT_READ && w1 == w0,
	   "a read past everything written does not wait (rc %d, %llu waits)", rc,
	   (unsigned long long)(w1 - w0));
	rc = f->pMethods->xRead(f, got, 100, 64 * 32768 + 10);
	st_vfs_direct_usage(&b, &w, &w2);
	ok(rc == SQLITE_OK && got[0] == 64 && got[99] == 64 && w2 == w1,
	   "a read of the batch being gathered is answered from it, no wait");
	rc = f->pMethods->xRead(f, got, 100, 5 * 32768 + 7);
	st_vfs_direct_usage(&b, &w, &w3);
	ok(rc == SQLITE_OK && got[0] == 5 && got[99] == 5 && w3 == w2 + 1,
	   "a read of the batch in flight waits for it (%llu wait) and reads its bytes",
	   (unsigned long long)(w3 - w2));
	rc = f->pMethods->xRead(f, got, 100, 6 * 32768);
	st_vfs_direct_usage(&b, &w, &w0);
	ok(rc == SQLITE_OK && got[0] == 6 && w0 == w3, "  once written, no more waits");
	f->pMethods->xClose(f);
out:
	free(f);
	unlink(path);
	free(path);
	free(page);
}

/* Pages of @path in the page cache, out of *@total (mincore of a map). */
static size_t
resident(const char *path, size_t *total)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	size_t n = 0, pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *vec;
	void *m;

	*total = 0;
	if (fd < 0 || fstat(fd, &st) < 0 || !st.st_size) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	*total = ((size_t)st.st_size + pg - 1) / pg;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	vec = tc_xcalloc(1, *total);
	if (m != MAP_FAILED && mincore(m, (size_t)st.st_size, vec) == 0)
		for (size_t i = 0; i < *total; i++)
			n += vec[i] & 1;
	if (m != MAP_FAILED)
		munmap(m, (size_t)st.st_size);
	free(vec);
	close(fd);
	return n;
}

/* A file written directly is not in the page cache; st_vfs_warm() reads it in. */
static void
warm(const char *dir)
{
	char *path = tc_xasprintf("%s/warm.db", dir);
	uint8_t *page = tc_xcalloc(1, 32768);
	sqlite3_file *f = dopen(path);
	size_t total, got = 0;

	if (!f || f->pMethods->iVersion != 1) {
		ok(1, "# SKIP no direct writes here");
		if (f)
			f->pMethods->xClose(f);
		goto out;
	}
	for (int i = 0; i < 256; i++)	/* 8 MiB */
		f->pMethods->xWrite(f, page, 32768, (sqlite3_int64)i * 32768);
	f->pMethods->xClose(f);
	got = resident(path, &total);
	ok(got < total / 2, "a file written directly is mostly not cached (%zu of %zu pages)",
	   got, total);
	st_vfs_warm(path);
	for (int i = 0; i < 50 && got < total; i++) {	/* the reads are queued, not waited for */
		usleep(100000);
		got = resident(path, &total);
	}
	ok(got == total, "st_vfs_warm() reads it into the page cache (%zu of %zu pages)", got,
	   total);
out:
	free(f);
	unlink(path);
	free(path);
	free(page);
}

int
main(void)
{
	char dir[] = "/var/tmp/nx-vfsd-XXXXXX", shm[] = "/dev/shm/nx-vfsd-XXXXXX";
	char *path;
	int fd;
	bool direct;

	if (!mkdtemp(dir))
		tap_skip_all("mkdtemp");
	ok(st_vfs_direct_name() && !strcmp(st_vfs_direct_name(), "nx-direct"),
	   "the VFS registers as nx-direct");
	path = tc_xasprintf("%s/probe", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_DIRECT, 0600);
	direct = fd >= 0;
	if (fd >= 0)
		close(fd);
	unlink(path);
	free(path);
	if (!direct)
		tap_diag("no O_DIRECT under /var/tmp: the model runs on forwarded files");

	path = tc_xasprintf("%s/m.db", dir);
	model(path, direct);
	unlink(path);
	free(path);
	write_error(dir);
	inflight(dir);
	warm(dir);

	setenv("NX_STORE_DIRECT", "0", 1);
	path = tc_xasprintf("%s/off.db", dir);
	rng = 42;
	model(path, false);
	unlink(path);
	free(path);
	unsetenv("NX_STORE_DIRECT");

	if (mkdtemp(shm)) {	/* tmpfs: no O_DIRECT at open */
		path = tc_xasprintf("%s/t.db", shm);
		fd = open(path, O_WRONLY | O_CREAT | O_DIRECT, 0600);
		if (fd >= 0) {
			close(fd);
			tap_diag("this /dev/shm takes O_DIRECT");
		}
		unlink(path);
		model(path, fd >= 0);
		unlink(path);
		free(path);
		rmdir(shm);
	}
	rmdir(dir);
	return tap_done();
}
