/* SPDX-License-Identifier: MIT */
/*
 * store/st-vfs.c - "nx-map", the VFS st_trace_open() reads finished trace
 * stores through: the system's default VFS, except that a main database
 * file is mapped whole, once, and SQLite is handed pointers into that map
 * (xFetch) and copies from it (xRead) wherever it covers the request.
 *
 * Why: SQLite maps at most SQLITE_MAX_MMAP_SIZE of a file (2 GB in
 * Debian's build, whatever PRAGMA mmap_size asks) and reads the rest with
 * pread() into its page cache, 32 KB a page here.  A trace store past 2 GB
 * (the 10M-event synthetic trace of docs/benchmarks-deps.md is 3 GB) then
 * pays a system call and a copy for every page a query touches beyond it.
 *
 * Only for files no one writes while they are open: trace stores are
 * written once by st_writer and replaced, never changed, afterwards.  A
 * read past the map (the file grew after it was mapped) goes to the
 * default VFS as before.  Everything else is forwarded unchanged.
 *
 * A second VFS, "nx-direct" (store/st-vfs-direct.c), is the one the writer
 * builds a store through: the same forwarding, with the main database's
 * page writes gathered and written with O_DIRECT behind the writer's back.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "store/store-int.h"

static sqlite3_vfs st_vfs;
static sqlite3_vfs st_vfs_direct;	/* "nx-direct": st_vfs with st_dfile_open() */
static sqlite3_vfs *st_vfs_real;	/* the default VFS */
static pthread_once_t st_vfs_once = PTHREAD_ONCE_INIT;
static atomic_ullong st_vfs_nmapped;	/* reads and fetches the map answered */

#define REAL(f) (((struct st_vfile *)(f))->real)

static int
st_vfile_close(sqlite3_file *f)
{
	struct st_vfile *v = (struct st_vfile *)f;
	int rc = v->real->pMethods ? v->real->pMethods->xClose(v->real) : SQLITE_OK;

	if (v->map)
		munmap((void *)v->map, v->mapsz);
	v->map = NULL;
	return rc;
}

static int
st_vfile_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	struct st_vfile *v = (struct st_vfile *)f;

	if (v->map && off >= 0 && n >= 0 && (uint64_t)off + (uint64_t)n <= v->mapsz) {
		memcpy(buf, v->map + off, (size_t)n);
		atomic_fetch_add_explicit(&st_vfs_nmapped, 1, memory_order_relaxed);
		return SQLITE_OK;
	}
	return v->real->pMethods->xRead(v->real, buf, n, off);
}

static int
st_vfile_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
	struct st_vfile *v = (struct st_vfile *)f;

	if (v->map && off >= 0 && n >= 0 && (uint64_t)off + (uint64_t)n <= v->mapsz) {
		*pp = (void *)(v->map + off);
		atomic_fetch_add_explicit(&st_vfs_nmapped, 1, memory_order_relaxed);
		return SQLITE_OK;
	}
	if (v->real->pMethods->iVersion < 3 || !v->real->pMethods->xFetch) {
		*pp = NULL;
		return SQLITE_OK;
	}
	return v->real->pMethods->xFetch(v->real, off, n, pp);
}

static int
st_vfile_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	struct st_vfile *v = (struct st_vfile *)f;

	if (p && v->map && (const uint8_t *)p >= v->map && (const uint8_t *)p < v->map + v->mapsz)
		return SQLITE_OK;	/* ours: mapped until the file closes */
	if (v->real->pMethods->iVersion < 3 || !v->real->pMethods->xUnfetch)
		return SQLITE_OK;
	return v->real->pMethods->xUnfetch(v->real, off, p);
}

/* ---- forwarded unchanged ---- */

static int
st_vfile_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	return REAL(f)->pMethods->xWrite(REAL(f), buf, n, off);
}

static int
st_vfile_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int
st_vfile_sync(sqlite3_file *f, int flags)
{
	return REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int
st_vfile_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int
st_vfile_lock(sqlite3_file *f, int lock)
{
	return REAL(f)->pMethods->xLock(REAL(f), lock);
}

static int
st_vfile_unlock(sqlite3_file *f, int lock)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), lock);
}

static int
st_vfile_reserved(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int
st_vfile_control(sqlite3_file *f, int op, void *arg)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int
st_vfile_sector(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int
st_vfile_device(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int
st_vfile_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **pp)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), region, size, extend, pp);
}

static int
st_vfile_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}

static void
st_vfile_shm_barrier(sqlite3_file *f)
{
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int
st_vfile_shm_unmap(sqlite3_file *f, int del)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

const sqlite3_io_methods st_vfile_io = {
	.iVersion = 3,
	.xClose = st_vfile_close,
	.xRead = st_vfile_read,
	.xWrite = st_vfile_write,
	.xTruncate = st_vfile_truncate,
	.xSync = st_vfile_sync,
	.xFileSize = st_vfile_size,
	.xLock = st_vfile_lock,
	.xUnlock = st_vfile_unlock,
	.xCheckReservedLock = st_vfile_reserved,
	.xFileControl = st_vfile_control,
	.xSectorSize = st_vfile_sector,
	.xDeviceCharacteristics = st_vfile_device,
	.xShmMap = st_vfile_shm_map,
	.xShmLock = st_vfile_shm_lock,
	.xShmBarrier = st_vfile_shm_barrier,
	.xShmUnmap = st_vfile_shm_unmap,
	.xFetch = st_vfile_fetch,
	.xUnfetch = st_vfile_unfetch,
};

/* Map file @name whole into @v (nothing when it cannot: reads then go to the default VFS). */
static void
st_vfile_map(struct st_vfile *v, const char *name)
{
	struct stat st;
	void *m;
	int fd = open(name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			v->map = m;
			v->mapsz = (size_t)st.st_size;
		}
	}
	close(fd);
}

int
st_vfile_open(struct st_vfile *v, sqlite3_file *real, sqlite3_filename name, int flags,
	      int *out)
{
	int rc;

	memset(v, 0, sizeof(*v));
	v->real = real;
	rc = st_vfs_real->xOpen(st_vfs_real, name, v->real, flags, out);
	/* SQLite closes nothing it could not open */
	v->base.pMethods = rc == SQLITE_OK ? &st_vfile_io : NULL;
	return rc;
}

static int
st_vfs_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *out)
{
	struct st_vfile *v = (struct st_vfile *)f;
	int rc;

	(void)vfs;
	rc = st_vfile_open(v, (sqlite3_file *)(v + 1), name, flags, out);
	if (rc == SQLITE_OK && name && (flags & SQLITE_OPEN_MAIN_DB) &&
	    (flags & SQLITE_OPEN_READONLY))
		st_vfile_map(v, name);
	return rc;
}

static int
st_vfs_delete(sqlite3_vfs *vfs, const char *name, int sync)
{
	(void)vfs;
	return st_vfs_real->xDelete(st_vfs_real, name, sync);
}

static int
st_vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	(void)vfs;
	return st_vfs_real->xAccess(st_vfs_real, name, flags, out);
}

static int
st_vfs_fullname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	(void)vfs;
	return st_vfs_real->xFullPathname(st_vfs_real, name, n, out);
}

static int
st_vfs_random(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return st_vfs_real->xRandomness(st_vfs_real, n, out);
}

static int
st_vfs_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return st_vfs_real->xSleep(st_vfs_real, us);
}

static int
st_vfs_time(sqlite3_vfs *vfs, double *out)
{
	(void)vfs;
	return st_vfs_real->xCurrentTime(st_vfs_real, out);
}

static int
st_vfs_error(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return st_vfs_real->xGetLastError ? st_vfs_real->xGetLastError(st_vfs_real, n, out) : 0;
}

static int
st_vfs_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	(void)vfs;
	return st_vfs_real->xCurrentTimeInt64(st_vfs_real, out);
}

static void
st_vfs_init(void)
{
	st_vfs_real = sqlite3_vfs_find(NULL);
	if (!st_vfs_real || st_vfs_real->iVersion < 2 || !st_vfs_real->xCurrentTimeInt64)
		return;	/* st_vfs_name() then says NULL: the default VFS */
	st_vfs.iVersion = 2;
	st_vfs.szOsFile = (int)sizeof(struct st_vfile) + st_vfs_real->szOsFile;
	st_vfs.mxPathname = st_vfs_real->mxPathname;
	st_vfs.zName = "nx-map";
	st_vfs.xOpen = st_vfs_open;
	st_vfs.xDelete = st_vfs_delete;
	st_vfs.xAccess = st_vfs_access;
	st_vfs.xFullPathname = st_vfs_fullname;
	st_vfs.xRandomness = st_vfs_random;
	st_vfs.xSleep = st_vfs_sleep;
	st_vfs.xCurrentTime = st_vfs_time;
	st_vfs.xGetLastError = st_vfs_error;
	st_vfs.xCurrentTimeInt64 = st_vfs_time64;
	/* loadable extensions, which we do not use: the default VFS's own */
	st_vfs.xDlOpen = st_vfs_real->xDlOpen;
	st_vfs.xDlError = st_vfs_real->xDlError;
	st_vfs.xDlSym = st_vfs_real->xDlSym;
	st_vfs.xDlClose = st_vfs_real->xDlClose;
	if (sqlite3_vfs_register(&st_vfs, 0) != SQLITE_OK) {
		st_vfs.zName = NULL;
		return;
	}
	st_vfs_direct = st_vfs;
	st_vfs_direct.zName = "nx-direct";
	st_vfs_direct.szOsFile = (int)st_dfile_size() + st_vfs_real->szOsFile;
	st_vfs_direct.xOpen = st_dfile_open;
	if (sqlite3_vfs_register(&st_vfs_direct, 0) != SQLITE_OK)
		st_vfs_direct.zName = NULL;
}

const char *
st_vfs_name(void)
{
	pthread_once(&st_vfs_once, st_vfs_init);
	return st_vfs.zName;
}

const char *
st_vfs_direct_name(void)
{
	pthread_once(&st_vfs_once, st_vfs_init);
	return st_vfs_direct.zName;
}

uint64_t
st_vfs_mapped_reads(void)
{
	return atomic_load_explicit(&st_vfs_nmapped, memory_order_relaxed);
}
