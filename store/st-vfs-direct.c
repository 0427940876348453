/* SPDX-License-Identifier: MIT */
/*
 * store/st-vfs-direct.c - the files of "nx-direct", the VFS the writer
 * builds a trace store through (st_writer_open()).  The main database's
 * page writes are gathered into 2 MiB batches and written with O_DIRECT
 * by a background thread (common/tc-wbehind.c), sorted by offset and
 * joined into one pwritev() per run of adjacent pages.
 *
 * Why: the store is written once, start to end, and read back only after
 * it is renamed into the library; through the page cache, every byte is
 * copied into a fresh page-cache page and written back later by the
 * kernel.  On the 2-core development box that copy and its bookkeeping
 * were about a tenth of the CPU of a 1M-event engine trace's ingest
 * (`copy_folio_from_iter_atomic` and ext4's write path, the store is
 * 300 MB there); O_DIRECT hands the batch's pages to the disk instead
 * (docs/architecture.md).
 *
 * Order: at most one batch is in flight and batches are written in the
 * order they were gathered, so a page written twice lands with its last
 * bytes.  A page written again while its batch is being gathered is
 * overwritten in the batch.  A read the batch being gathered holds whole is
 * answered from it; one that overlaps it first writes the batch and waits,
 * one that overlaps only the batch in flight waits for that; the others
 * read the file at once.  A write that is not whole aligned blocks,
 * truncate, sync and most file controls first write the batch and wait,
 * then go to the default VFS's file.  The kernel keeps
 * the page cache coherent with direct writes (it writes back and drops the
 * cached pages of a range a direct write covers), so reads through the
 * default VFS see what was written either way.
 *
 * The first failed write is kept and fails every later write, read and
 * sync (SQLITE_FULL when the disk is full, as the default VFS says);
 * st_vfs_settle() (after the last COMMIT, before the store is
 * synced and published) reports it.  Where the file system refuses
 * O_DIRECT (tmpfs: EINVAL at open), the file is the default VFS's alone;
 * where it refuses a direct write (EINVAL), the thread drops O_DIRECT and
 * writes through the page cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "store/store-int.h"

#define ST_DIRECT_ALIGN 4096	/* offsets, lengths and buffers of direct writes */
#define ST_DBATCH_BYTES ((size_t)2 << 20)
#define ST_DBATCH_MAX (ST_DBATCH_BYTES / ST_DIRECT_ALIGN)
#define ST_DIOV 64		/* pages per pwritev() at most */
#define ST_WARM_STEP ((off_t)2 << 20)	/* st_vfs_warm()'s read-ahead calls */

struct st_dent {		/* a page of a batch */
	int64_t off;		/* in the file */
	uint32_t len, pos;	/* pos: in the batch's data */
};

struct st_dbatch {
	uint8_t *data;		/* owned: ST_DBATCH_BYTES, aligned */
	size_t used;
	unsigned n;
	int64_t lo, hi;		/* the span of the pages' offsets */
	struct st_dent ent[ST_DBATCH_MAX];
};

struct st_dfile {
	struct st_vfile v;	/* first: st_vfile_io's forwarders read v.real */
	int fd;			/* owned: the same file, write-only, O_DIRECT */
	struct tc_wbehind wb;
	struct st_dbatch *b;	/* owned: being gathered */
	int64_t end;		/* the size with what is gathered or in flight */
	int64_t fl_lo, fl_hi;	/* the span of the batch last handed over, until waited for */
	int err;		/* the first write error seen (-errno), sticky */
};

static sqlite3_io_methods st_dfile_io;
static pthread_once_t st_dfile_once = PTHREAD_ONCE_INIT;
static atomic_ullong st_dfile_bytes, st_dfile_calls, st_dfile_waits;

size_t
st_dfile_size(void)
{
	return sizeof(struct st_dfile);
}

void
st_vfs_direct_usage(uint64_t *bytes, uint64_t *writes, uint64_t *waits)
{
	*bytes = atomic_load(&st_dfile_bytes);
	*writes = atomic_load(&st_dfile_calls);
	*waits = atomic_load(&st_dfile_waits);
}

static void
st_dbatch_reset(struct st_dbatch *b)
{
	b->used = 0;
	b->n = 0;
	b->lo = INT64_MAX;
	b->hi = INT64_MIN;
}

static struct st_dbatch *
st_dbatch_new(void)
{
	struct st_dbatch *b = tc_xmalloc(sizeof(*b));

	b->data = tc_xaligned(ST_DIRECT_ALIGN, ST_DBATCH_BYTES);
	st_dbatch_reset(b);
	return b;
}

static void
st_dbatch_free(struct st_dbatch *b)
{
	if (b)
		free(b->data);
	free(b);
}

/* pwritev() all of @iov (@n entries, @len bytes) at @off: 0 or -errno. */
static int
st_dfile_pwritev(int fd, struct iovec *iov, int n, size_t len, int64_t off)
{
	bool retried = false;

	while (len) {
		ssize_t k = pwritev(fd, iov, n, off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EINVAL && !retried) {
			int fl = fcntl(fd, F_GETFL);

			/* refused direct: through the page cache from now on */
			if (fl < 0 || !(fl & O_DIRECT) || fcntl(fd, F_SETFL, fl & ~O_DIRECT) < 0)
				return -EINVAL;
			retried = true;
			continue;
		}
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		atomic_fetch_add_explicit(&st_dfile_calls, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&st_dfile_bytes, (uint64_t)k, memory_order_relaxed);
		len -= (size_t)k;
		off += k;
		while (n && (size_t)k >= iov->iov_len) {	/* skip what went */
			k -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n && k) {
			iov->iov_base = (char *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}

static int
st_dent_cmp(const void *a, const void *b)
{
	const struct st_dent *x = a, *y = b;

	return (x->off > y->off) - (x->off < y->off);
}

/* The thread's callback: the batch's pages by offset, adjacent ones in one call. */
static int
st_dbatch_write(void *ctx, void *job, size_t n)
{
	struct st_dfile *d = ctx;
	struct st_dbatch *b = job;
	struct iovec iov[ST_DIOV];
	unsigned i = 0;
	int rc = 0;

	(void)n;
	qsort(b->ent, b->n, sizeof(b->ent[0]), st_dent_cmp);
	while (i < b->n && !rc) {
		int64_t off = b->ent[i].off;
		size_t len = 0;
		int k = 0;

		do {
			iov[k].iov_base = b->data + b->ent[i].pos;
			iov[k].iov_len = b->ent[i].len;
			len += b->ent[i].len;
			k++;
			i++;
		} while (i < b->n && k < ST_DIOV && b->ent[i].off == off + (int64_t)len);
		rc = st_dfile_pwritev(d->fd, iov, k, len, off);
	}
	st_dbatch_reset(b);
	return rc;
}

/* Hand the batch being gathered to the thread: 0 or -errno. */
static int
st_dfile_send(struct st_dfile *d)
{
	if (d->err || !d->b->n)
		return d->err;
	d->fl_lo = d->b->lo;	/* in flight from here (the one before is written) */
	d->fl_hi = d->b->hi;
	d->err = tc_wb_put(&d->wb, (void **)&d->b, d->b->used);
	if (!d->b)
		d->b = st_dbatch_new();
	st_dbatch_reset(d->b);	/* after a failure too: the error is sticky */
	return d->err;
}

/* Wait until the batch in flight is written: 0 or -errno. */
static int
st_dfile_wait(struct st_dfile *d)
{
	if (!d->err && d->fl_lo < d->fl_hi) {
		atomic_fetch_add_explicit(&st_dfile_waits, 1, memory_order_relaxed);
		d->err = tc_wb_wait(&d->wb);
	}
	d->fl_lo = INT64_MAX;
	d->fl_hi = INT64_MIN;
	return d->err;
}

/* Send the batch and wait until all is written: 0 or -errno. */
static int
st_dfile_settle(struct st_dfile *d)
{
	return st_dfile_send(d) ? d->err : st_dfile_wait(d);
}

/*
 * The page of the batch that shares a byte with [@off, @off + @n), or NULL.
 * A batch's pages never overlap one another (a write over pages of another
 * size sends the batch first), so it is the only one when it holds the
 * whole range.
 */
static const struct st_dent *
st_dbatch_find(const struct st_dbatch *b, int64_t off, int64_t n)
{
	if (!b->n || off >= b->hi || off + n <= b->lo)
		return NULL;
	for (unsigned i = 0; i < b->n; i++)
		if (off < b->ent[i].off + b->ent[i].len && b->ent[i].off < off + n)
			return &b->ent[i];
	return NULL;
}

/* Whether page @e holds all of [@off, @off + @n). */
static bool
st_dent_holds(const struct st_dent *e, int64_t off, int64_t n)
{
	return off >= e->off && off + n <= e->off + e->len;
}

/* SQLite's code for the file's write error: SQLITE_FULL for a full disk
 * (as the default VFS says, and the library's message looks for), else @code. */
static int
st_dfile_ioerr(const struct st_dfile *d, int code)
{
	return d->err == -ENOSPC || d->err == -EDQUOT ? SQLITE_FULL : code;
}

static int
st_dfile_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 off)
{
	struct st_dfile *d = (struct st_dfile *)f;
	struct st_dbatch *b = d->b;
	const struct st_dent *e;
	int rc;

	if (off < 0 || n <= 0 || off % ST_DIRECT_ALIGN || n % ST_DIRECT_ALIGN ||
	    (size_t)n > ST_DBATCH_BYTES) {
		if (st_dfile_settle(d) < 0)
			return st_dfile_ioerr(d, SQLITE_IOERR_WRITE);
		rc = d->v.real->pMethods->xWrite(d->v.real, p, n, off);
		if (rc == SQLITE_OK && off + n > d->end)
			d->end = off + n;
		return rc;
	}
	if (d->err)
		return st_dfile_ioerr(d, SQLITE_IOERR_WRITE);
	e = st_dbatch_find(b, off, n);
	if (e && e->off == off && e->len == (uint32_t)n) {	/* the same page again */
		memcpy(b->data + e->pos, p, (size_t)n);
		return SQLITE_OK;
	}
	if (e || b->used + (size_t)n > ST_DBATCH_BYTES) {
		/* full, or the write overlaps pages of another size: in order */
		if (st_dfile_send(d) < 0)
			return st_dfile_ioerr(d, SQLITE_IOERR_WRITE);
		b = d->b;
	}
	memcpy(b->data + b->used, p, (size_t)n);
	b->ent[b->n++] = (struct st_dent){ .off = off, .len = (uint32_t)n,
					   .pos = (uint32_t)b->used };
	b->used += (size_t)n;
	b->lo = TC_MIN(b->lo, off);
	b->hi = TC_MAX(b->hi, off + n);
	if (off + n > d->end)
		d->end = off + n;
	return SQLITE_OK;
}

static int
st_dfile_read(sqlite3_file *f, void *p, int n, sqlite3_int64 off)
{
	struct st_dfile *d = (struct st_dfile *)f;
	const struct st_dent *e = st_dbatch_find(d->b, off, n);
	int rc;

	if (d->err)
		return st_dfile_ioerr(d, SQLITE_IOERR_READ);
	if (e && st_dent_holds(e, off, n)) {
		memcpy(p, d->b->data + e->pos + (off - e->off), (size_t)n);
		return SQLITE_OK;
	}
	/* only what overlaps the read has to be on the disk first */
	if (e ? st_dfile_settle(d) < 0 :
	    off < d->fl_hi && off + n > d->fl_lo && st_dfile_wait(d) < 0)
		return st_dfile_ioerr(d, SQLITE_IOERR_READ);
	rc = d->v.real->pMethods->xRead(d->v.real, p, n, off);
	/* short on the disk, where later pages are still to be written: a
	 * hole of the file as it will be, zeros (the default VFS filled them) */
	if (rc == SQLITE_IOERR_SHORT_READ && off + n <= d->end)
		rc = SQLITE_OK;
	return rc;
}

static int
st_dfile_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct st_dfile *d = (struct st_dfile *)f;
	int rc;

	if (st_dfile_settle(d) < 0)
		return st_dfile_ioerr(d, SQLITE_IOERR_TRUNCATE);
	rc = d->v.real->pMethods->xTruncate(d->v.real, size);
	if (rc == SQLITE_OK)
		d->end = size;
	return rc;
}

static int
st_dfile_sync(sqlite3_file *f, int flags)
{
	struct st_dfile *d = (struct st_dfile *)f;

	if (st_dfile_settle(d) < 0)
		return st_dfile_ioerr(d, SQLITE_IOERR_FSYNC);
	return d->v.real->pMethods->xSync(d->v.real, flags);
}

static int
st_dfile_filesize(sqlite3_file *f, sqlite3_int64 *size)
{
	struct st_dfile *d = (struct st_dfile *)f;
	int rc = d->v.real->pMethods->xFileSize(d->v.real, size);

	if (rc == SQLITE_OK && d->end > *size)
		*size = d->end;
	return rc;
}

static int
st_dfile_control(sqlite3_file *f, int op, void *arg)
{
	struct st_dfile *d = (struct st_dfile *)f;
	int rc;

	switch (op) {
	case ST_FCNTL_SETTLE:
		rc = st_dfile_settle(d);
		if (arg)
			*(int *)arg = -rc;
		return rc ? st_dfile_ioerr(d, SQLITE_IOERR_WRITE) : SQLITE_OK;
	case SQLITE_FCNTL_SIZE_HINT:	/* these neither read nor write pages */
	case SQLITE_FCNTL_SYNC:		/* (xSync, if it follows, settles) */
	case SQLITE_FCNTL_COMMIT_PHASETWO:
	case SQLITE_FCNTL_PDB:
	case SQLITE_FCNTL_PRAGMA:
	case SQLITE_FCNTL_BUSYHANDLER:
	case SQLITE_FCNTL_HAS_MOVED:
	case SQLITE_FCNTL_LOCKSTATE:
	case SQLITE_FCNTL_DATA_VERSION:
	case SQLITE_FCNTL_VFSNAME:
	case SQLITE_FCNTL_VFS_POINTER:
	case SQLITE_FCNTL_TEMPFILENAME:
		break;
	default:
		if (st_dfile_settle(d) < 0)
			return st_dfile_ioerr(d, SQLITE_IOERR);
	}
	return d->v.real->pMethods->xFileControl(d->v.real, op, arg);
}

static int
st_dfile_close(sqlite3_file *f)
{
	struct st_dfile *d = (struct st_dfile *)f;

	(void)st_dfile_settle(d);	/* its error was st_vfs_settle()'s to report */
	st_dbatch_free(tc_wb_stop(&d->wb));
	st_dbatch_free(d->b);
	d->b = NULL;
	close(d->fd);
	d->fd = -1;
	return st_vfile_io.xClose(f);
}

static void
st_dfile_init(void)
{
	/* version 1: no shared memory (no WAL) and no xFetch, so that SQLite
	 * never reads the file through a map of its own */
	st_dfile_io = (sqlite3_io_methods){
		.iVersion = 1,
		.xClose = st_dfile_close,
		.xRead = st_dfile_read,
		.xWrite = st_dfile_write,
		.xTruncate = st_dfile_truncate,
		.xSync = st_dfile_sync,
		.xFileSize = st_dfile_filesize,
		.xLock = st_vfile_io.xLock,
		.xUnlock = st_vfile_io.xUnlock,
		.xCheckReservedLock = st_vfile_io.xCheckReservedLock,
		.xFileControl = st_dfile_control,
		.xSectorSize = st_vfile_io.xSectorSize,
		.xDeviceCharacteristics = st_vfile_io.xDeviceCharacteristics,
	};
}

int
st_dfile_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *out)
{
	struct st_dfile *d = (struct st_dfile *)f;
	sqlite3_int64 size = 0;
	int rc;

	(void)vfs;
	pthread_once(&st_dfile_once, st_dfile_init);
	memset(d, 0, sizeof(*d));
	d->fd = -1;
	/* forwarded as they are (st_vfile_io) ... */
	rc = st_vfile_open(&d->v, (sqlite3_file *)(d + 1), name, flags, out);
	if (rc != SQLITE_OK || !name || !(flags & SQLITE_OPEN_MAIN_DB) ||
	    (flags & SQLITE_OPEN_READONLY) || !tc_env_num("NX_STORE_DIRECT", 0, 1, 1))
		return rc;
	d->fd = open(name, O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (d->fd < 0)
		return SQLITE_OK;	/* ... where direct writes cannot be had */
	tc_wb_init(&d->wb, st_dbatch_write, d, "store-write");
	d->b = st_dbatch_new();
	d->fl_lo = INT64_MAX;
	d->fl_hi = INT64_MIN;
	if (d->v.real->pMethods->xFileSize(d->v.real, &size) == SQLITE_OK)
		d->end = size;
	d->v.base.pMethods = &st_dfile_io;
	return SQLITE_OK;
}

int
st_vfs_settle(sqlite3 *db, const char *path, struct tc_err *err)
{
	int e = 0, rc = sqlite3_file_control(db, "main", ST_FCNTL_SETTLE, &e);

	if (rc == SQLITE_OK || rc == SQLITE_NOTFOUND)
		return 0;
	e = e > 0 ? e : EIO;
	return tc_err_set(err, -e, "%s: cannot write the store: %s", path, strerror(e));
}

/* The most st_vfs_warm() reads ahead: an eighth of the memory the process
 * may use (no more than SQLite's page cache, the staging and the edges
 * take while a trace is ingested, and they are given back by then). */
static uint64_t
st_vfs_warm_most(void)
{
	static _Atomic uint64_t most;

	if (!most)
		most = tc_mem_share(8, (uint64_t)64 << 20, (uint64_t)8 << 30);
	return most;
}

void
st_vfs_warm(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0) {
		off_t end = TC_MIN(st.st_size, (off_t)st_vfs_warm_most());

		/* the kernel reads ahead at most a few MiB per call */
		for (off_t off = 0; off < end; off += ST_WARM_STEP)
			(void)posix_fadvise(fd, off, ST_WARM_STEP, POSIX_FADV_WILLNEED);
	}
	close(fd);
}
