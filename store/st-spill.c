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
 *
 * With ST_SPILL_RAM the bytes go to an anonymous mapping instead, grown by
 * doubling (mremap moves page tables, not bytes) on transparent huge pages,
 * and st_spill_map() hands that out: no copy into the page cache, no
 * writeback, no faults on file pages when it is read back.  All such
 * spills of the process share st_spill_ram() bytes; the one that finds it
 * used up writes what it holds to its file and carries on as above, so a
 * trace of any size still stages in bounded memory.  A 504 MB Perfetto
 * trace stages 285 MB (runs and args): with them in memory its ingest took
 * about 5% less wall time, a 10M-event engine trace's analysis, which reads
 * the args again, 6-24% in two pairs (docs/benchmarks-perfetto.md,
 * docs/benchmarks-deps.md).
 * The cost is resident memory: a 1 GB Kineto trace's 645 MB of args held
 * its peak RSS at 957 MiB instead of 370, for no speed either way.
 *
 * A spill in memory that is read once more in about the order it was
 * written (the args, by deps/) can lend what its reader is done with
 * (st_spill_release(), st_spill_lend()): the dependency edges are
 * collected into those pages, whose memory is already the process's,
 * instead of new ones.  Fresh pages cost their first touch (the kernel
 * zeroes them; on the development VM the host faults them in as well):
 * at 10M events the 1.5 GB of edge pages took 2.2 s of the thread that
 * reads the args (docs/benchmarks-deps.md, eighteenth round).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "store/store-int.h"

#define ST_SPILL_BUF (1u << 20)
#define ST_SPILL_RAM_FIRST ((size_t)4 << 20)	/* a spill's first mapping in memory */
#define ST_SPILL_RAM_STEP ((size_t)2 << 20)	/* the least it grows by: a huge page */
#define ST_SPILL_RAM_LEAST ((size_t)64 << 20)
#define ST_SPILL_RAM_MOST ((size_t)4 << 30)
#define ST_SPILL_LEND_ALIGN ((uint64_t)4096)	/* lent bytes start on a page */

static _Atomic size_t st_spill_ram_held;	/* capacity of all spills' mappings */
static _Atomic size_t st_spill_ram_top;	/* the most it has been */
static _Atomic uint64_t st_spill_filed;	/* bytes handed to spill files */

size_t
st_spill_ram(void)
{
	static _Atomic size_t share;	/* worked out once: 0 is "not yet" */
	size_t v = atomic_load(&share);
	long mb;

	if (v)
		return v - 1;	/* tc_mem_total() reads /proc and /sys: once */
	mb = tc_env_num("NX_SPILL_RAM_MB", 0, (long)(ST_SPILL_RAM_MOST >> 20), -1);
	v = mb >= 0 ? (size_t)mb << 20 :
	    (size_t)tc_mem_share(16, ST_SPILL_RAM_LEAST, ST_SPILL_RAM_MOST);
	atomic_store(&share, v + 1);
	return v;
}

void
st_spill_usage(size_t *ram_now, size_t *ram_top, uint64_t *filed)
{
	*ram_now = atomic_load(&st_spill_ram_held);
	*ram_top = atomic_load(&st_spill_ram_top);
	*filed = atomic_load(&st_spill_filed);
}

/* Count @n more bytes against the share: false when they do not fit. */
static bool
st_spill_ram_take(size_t n)
{
	size_t lim = st_spill_ram(), cur = atomic_load(&st_spill_ram_held);

	do {
		if (n > lim || cur > lim - n)
			return false;
	} while (!atomic_compare_exchange_weak(&st_spill_ram_held, &cur, cur + n));
	cur += n;
	for (size_t top = atomic_load(&st_spill_ram_top); top < cur;)
		if (atomic_compare_exchange_weak(&st_spill_ram_top, &top, cur))
			break;
	return true;
}

static void
st_spill_ram_give(size_t n)
{
	atomic_fetch_sub(&st_spill_ram_held, n);
}

/* Unmap the memory of @sp and give its share back. */
static void
st_spill_ram_free(struct st_spill *sp)
{
	if (sp->mem) {
		munmap(sp->mem, sp->cap);
		st_spill_ram_give(sp->cap);
	}
	if (sp->map == sp->mem)
		sp->map = NULL;
	sp->mem = NULL;
	sp->cap = 0;
	sp->ram = false;
}

/*
 * From memory to the file: write what @sp holds, free the mapping and go on
 * with the write buffers.  0 or -errno.
 */
static int
st_spill_ram_out(struct st_spill *sp)
{
	int rc = sp->size ? tc_write_all(sp->fd, sp->mem, (size_t)sp->size) : 0;

	atomic_fetch_add(&st_spill_filed, sp->size);
	st_spill_ram_free(sp);
	if (!sp->buf)
		sp->buf = tc_xmalloc(ST_SPILL_BUF);
	return rc;
}

/*
 * Room in memory for @n more bytes: 0, or 1 when the share (or the kernel)
 * says no and the caller is to go on with the file.
 */
static int
st_spill_ram_room(struct st_spill *sp, size_t n)
{
	size_t need = (size_t)sp->size + n, cap = sp->cap ? sp->cap : ST_SPILL_RAM_FIRST;
	void *m;

	if (need < n)
		return 1;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if (!st_spill_ram_take(cap - sp->cap)) {
		/* no room to double: what it needs, in whole huge pages, may fit */
		cap = need > SIZE_MAX - ST_SPILL_RAM_STEP ? need :
		      (need + ST_SPILL_RAM_STEP - 1) / ST_SPILL_RAM_STEP * ST_SPILL_RAM_STEP;
		if (cap <= sp->cap || !st_spill_ram_take(cap - sp->cap))
			return 1;
	}
	if (sp->mem)
		m = mremap(sp->mem, sp->cap, cap, MREMAP_MAYMOVE);
	else
		m = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		st_spill_ram_give(cap - sp->cap);
		return 1;
	}
	/* a hint, fine if refused; not for the plain-memory peer of the benchmarks */
	if (tc_env_num("NX_MALLOC_THP", 0, 1, 1))
		(void)madvise(m, cap, MADV_HUGEPAGE);
	sp->mem = m;
	sp->cap = cap;
	return 0;
}

/* The write-behind thread's callback: append @n bytes of @buf. */
static int
st_spill_put(void *ctx, void *buf, size_t n)
{
	struct st_spill *sp = ctx;

	return tc_write_all(sp->fd, buf, n);
}

int
st_spill_open(struct st_spill *sp, const char *base, const char *suffix, unsigned flags,
	      struct tc_err *err)
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
	tc_wb_init(&sp->wb, st_spill_put, sp, "spill-write");
	sp->shared = flags & ST_SPILL_RAM;
	sp->ram = sp->shared && st_spill_ram() > 0;
	if (!sp->ram)
		sp->buf = tc_xmalloc(ST_SPILL_BUF);
out:
	free(path);
	return rc;
}

/* Hand the full buffer to the thread and go on with the other one. */
static int
st_spill_flush_async(struct st_spill *sp)
{
	int rc = tc_wb_put(&sp->wb, (void **)&sp->buf, sp->n);

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

	if (sp->ram && n) {
		if (sp->size + n <= sp->cap || !st_spill_ram_room(sp, n)) {
			memcpy(sp->mem + sp->size, p, n);
			sp->size += n;
			return 0;
		}
		rc = st_spill_ram_out(sp);	/* the share is used up: the file from here */
		if (rc < 0)
			return rc;
	}
	sp->size += n;
	if (sp->shared)
		atomic_fetch_add(&st_spill_filed, n);
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
	if (sp->ram) {
		sp->map = sp->mem;	/* NULL when nothing was written */
		sp->mapsz = (size_t)sp->size;
		return 0;
	}
	rc = tc_wb_wait(&sp->wb);
	free(tc_wb_stop(&sp->wb));
	if (rc < 0)
		return rc;
	rc = tc_write_all(sp->fd, sp->buf, sp->n);
	sp->n = 0;
	if (rc < 0)
		return rc;
	free(sp->buf);
	sp->buf = NULL;
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
	if (sp->map && !sp->ram)	/* in memory: its only copy */
		madvise(sp->map, sp->mapsz, MADV_DONTNEED);
}

void
st_spill_release(struct st_spill *sp, uint64_t below)
{
	uint64_t cur = atomic_load_explicit(&sp->released, memory_order_relaxed);

	if (below > cur)
		atomic_store_explicit(&sp->released, below, memory_order_release);
}

/* Where the next lent bytes start: past those lent, on a page. */
static uint64_t
st_spill_lend_at(const struct st_spill *sp)
{
	return (sp->lent + ST_SPILL_LEND_ALIGN - 1) & ~(ST_SPILL_LEND_ALIGN - 1);
}

void *
st_spill_lend(struct st_spill *sp, size_t n)
{
	uint64_t at = st_spill_lend_at(sp), top;

	if (!sp->ram || !sp->mem)
		return NULL;
	top = TC_MIN(atomic_load_explicit(&sp->released, memory_order_acquire), sp->size);
	if (at > top || n > top - at)
		return NULL;
	sp->lent = at + n;
	return sp->mem + at;
}

bool
st_spill_lent(const struct st_spill *sp, const void *p)
{
	const char *c = p;

	return sp->lent && c >= sp->mem && c < sp->mem + sp->lent;
}

void
st_spill_lend_end(struct st_spill *sp)
{
	size_t at = (size_t)st_spill_lend_at(sp);

	if (!sp->ram || !sp->mem || !at || at >= sp->cap)
		return;
	/* shrunk where it lies (the lent pages stay put), the share given back */
	if (mremap(sp->mem, sp->cap, at, 0) == sp->mem) {
		st_spill_ram_give(sp->cap - at);
		sp->cap = at;
	} else {
		madvise(sp->mem + at, sp->cap - at, MADV_DONTNEED);
	}
	/* nothing past the lent bytes is to be read any more */
	sp->size = TC_MIN(sp->size, (uint64_t)at);
	sp->mapsz = TC_MIN(sp->mapsz, at);
}

void
st_spill_close(struct st_spill *sp)
{
	free(tc_wb_stop(&sp->wb));
	st_spill_ram_free(sp);
	if (sp->map)
		munmap(sp->map, sp->mapsz);
	if (sp->fd > 0)
		close(sp->fd);
	free(sp->buf);
	memset(sp, 0, sizeof(*sp));
}
