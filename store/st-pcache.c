/* SPDX-License-Identifier: MIT */
/*
 * store/st-pcache.c - one pool of page buffers that every SQLite
 * connection of the process shares (st_pcache_setup()).
 *
 * Why: SQLite's default page cache mallocs each 32 KB page buffer
 * (33 KB with its header) and frees it again as the cache turns over.
 * Blocks that size are above glibc's mmap threshold or land in freshly
 * grown heap, so most buffers are new memory: an ingest of the 1M-event
 * dependency trace did 9453 such mallocs at 8491 distinct addresses, and
 * each 4 KiB page of each one cost the kernel a page fault.  Buffers from
 * a fixed pool are reused instead, and the pool asks for transparent huge
 * pages, so that it is faulted in 2 MiB at a time, once.
 *
 * SQLite links every slot into its free list when it starts, so the whole
 * pool (33 MB for 1024 slots, about 17 huge pages) is resident from then
 * on; that is why only the heavy commands set it up (cli/main.c).  SQLite
 * falls back to malloc when all slots are taken and for pages larger than
 * a slot.  NX_PAGE_POOL=0 turns it off;
 * NX_PAGE_POOL=N sets the number of slots.  Off by default in an
 * AddressSanitizer build, so that it still checks page buffers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "store/store.h"

#define ST_PCACHE_PAGE 32768	/* page_size of trace stores (store/st-writer.c) */
#define ST_PCACHE_SLOTS 1024	/* 32 MiB: twice the ingest's cache_size */

static void *st_pcache_mem;	/* owned for the life of the process */
static int st_pcache_nslot;

int
st_pcache_setup(void)
{
	const char *env = getenv("NX_PAGE_POOL");
	bool set = env && *env;
	int hdr = 0;
	long n;
	size_t sz;
	void *m;

	if (st_pcache_mem)
		return 0;
#ifdef __SANITIZE_ADDRESS__
	if (!set)
		return 0;	/* let AddressSanitizer see every page buffer */
#endif
	/* -1: set, but not a count in range (tc_env_num() gives the default then) */
	n = tc_env_num("NX_PAGE_POOL", 0, 1 << 20, set ? -1 : ST_PCACHE_SLOTS);
	if (n < 0)
		return -EINVAL;
	if (n == 0)
		return 0;
	if (sqlite3_config(SQLITE_CONFIG_PCACHE_HDRSZ, &hdr) != SQLITE_OK)
		return -EBUSY;	/* SQLite already initialised */
	sz = ((size_t)ST_PCACHE_PAGE + (size_t)hdr + 7) & ~(size_t)7;
	m = mmap(NULL, sz * (size_t)n, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	(void)madvise(m, sz * (size_t)n, MADV_HUGEPAGE);	/* a hint: fine if refused */
	if (sqlite3_config(SQLITE_CONFIG_PAGECACHE, m, (int)sz, n) != SQLITE_OK) {
		munmap(m, sz * (size_t)n);
		return -EBUSY;
	}
	st_pcache_mem = m;
	st_pcache_nslot = (int)n;
	return 0;
}

void
st_pcache_report(FILE *f)
{
	int cur = 0, hi = 0, ocur = 0, ohi = 0;

	if (!st_pcache_mem) {
		fprintf(f, "store: page pool off\n");
		return;
	}
	sqlite3_status(SQLITE_STATUS_PAGECACHE_USED, &cur, &hi, 0);
	sqlite3_status(SQLITE_STATUS_PAGECACHE_OVERFLOW, &ocur, &ohi, 0);
	fprintf(f, "store: page pool %d of %d slots in use, %d at most; %.1f MB overflow at most\n",
		cur, st_pcache_nslot, hi, ohi / 1e6);
}
