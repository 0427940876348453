/* SPDX-License-Identifier: MIT */
/* store/store-int.h - private to store/: the writer's state. */
#ifndef ST_STORE_INT_H
#define ST_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include "store/store.h"
#include "store/st-edges.h"

/*
 * struct st_conn (store.h): shared by the `events` (st-vtab.c) and `edges`
 * (st-edges.c) modules of one connection, which point it at their tables of
 * schema "main" while connected; freed when both modules are gone.
 */
struct vt_tab;
struct ev_vtab;
struct st_conn {
	int refs;		/* modules registered with it */
	sqlite3 *db;		/* the connection (the registry's key) */
	struct st_conn *next;	/* the registry's chain (st-conn.c) */
	struct vt_tab *events;
	struct ev_vtab *edges;
};

/**
 * st_conn_new - a struct st_conn for @db with one reference, registered so
 * that st_conn_of(@db) finds it.  Return: it, or NULL when out of memory.
 */
struct st_conn *st_conn_new(sqlite3 *db);

/**
 * st_conn_unref - a module's destructor: drop its reference to @p (a struct
 * st_conn); the last one unregisters and frees it.
 */
void st_conn_unref(void *p);

/** st_edges_register_conn - st_edges_register(), the module sharing @c. */
int st_edges_register_conn(sqlite3 *db, struct st_conn *c);

struct st_hent {		/* open-addressing string -> id map entry */
	char *key;
	uint32_t hash;
	int id;
};

struct st_map {
	struct st_hent *tab;
	size_t cap, n;
};

struct st_dev {
	char *key, *name, *label;
	int kind;
	int64_t sort;
	bool has_sort;
};

struct st_unit_def {
	char *key, *name;
	int dev, kind;
	int64_t sort;
	bool has_sort;
	int64_t n_add, ts_min, end_max;	/* counted by st_event_add */
	/* filled by finish */
	int64_t count, first, last, overlaps;
	int max_depth;
};

/*
 * Staging (see st-finish.c): each added event leaves a 24-byte sort key in
 * memory and a fixed 32-byte record in an unlinked spill file, its args text
 * in a second one.  Finish sorts the keys and reads records back by seq
 * through mmap: the args are written once to disk before the final table.
 */
struct st_key {
	int64_t ts, dur;
	uint32_t seq;
	int32_t unit;
};

struct st_rec {			/* record seq lives at offset (seq - 1) * 32 */
	double value;
	uint64_t args_off;
	uint32_t name, cat, args_len;	/* args_len 0: NULL */
	uint8_t kind, flags;
	uint8_t pad[2];
};

struct st_spill {		/* an append-only unlinked file, mmap'd to read */
	int fd;
	/* ST_SPILL_RAM: the bytes kept in @mem (an anonymous mapping of @cap
	 * bytes, counted against the process's share) until that share runs
	 * out; the file is written only from then on */
	char *mem;
	size_t cap;
	bool ram;		/* the bytes are in @mem */
	bool shared;		/* opened with ST_SPILL_RAM */
	char *buf;		/* write buffer being filled */
	size_t n;
	uint64_t size;		/* logical size: written + buffered */
	char *map;
	size_t mapsz;
	/* a full buffer is written by a background thread while the caller
	 * fills the other one (see st-spill.c) */
	struct tc_wbehind wb;
	/* in memory and read for the last time: the bytes below @released will
	 * not be read again; [0, @lent) of @mem are lent out (st_spill_lend()) */
	_Atomic uint64_t released;
	uint64_t lent;
};

/* A file of the VFSs of store/st-vfs.c: the default VFS's file follows it
 * in the same allocation (after struct st_dfile for "nx-direct"). */
struct st_vfile {
	sqlite3_file base;	/* pMethods: st_vfile_io, or st-vfs-direct.c's */
	sqlite3_file *real;	/* the default VFS's file */
	const uint8_t *map;	/* owned: the whole file as it was opened, or NULL */
	size_t mapsz;
};

/* Forwards every call to the default VFS's file, reads from the map first. */
extern const sqlite3_io_methods st_vfile_io;
/* Open the default VFS's file @real (memory right after the caller's own
 * struct) for @v, whose methods are then st_vfile_io; SQLite's code. */
int st_vfile_open(struct st_vfile *v, sqlite3_file *real, sqlite3_filename name, int flags,
		  int *out);

/* store/st-vfs-direct.c, for st-vfs.c's "nx-direct" */
size_t st_dfile_size(void);
int st_dfile_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags,
		  int *out);

/* sqlite3_file_control() opcode of "nx-direct" files: write what is
 * gathered, wait for it; the argument, an int *, gets the first write
 * error's errno (0 when none). */
#define ST_FCNTL_SETTLE 0x4e5801

/**
 * st_vfs_direct_name - the name of the VFS the writer builds a trace store
 * through (store/st-vfs-direct.c): the main database's whole-page writes
 * are gathered and written with O_DIRECT by a background thread, sparing
 * the copy into the page cache and its writeback.  NULL (the default VFS)
 * when the default one cannot be wrapped.  NX_STORE_DIRECT=0 turns the
 * direct writes off (the files are then written as the default VFS does).
 */
const char *st_vfs_direct_name(void);

/**
 * st_vfs_settle - write and wait for what the store @db (main database)
 * has gathered: 0, or -errno with @err set (naming @path) when a write
 * failed.  A no-op for files of other VFSs.
 */
int st_vfs_settle(sqlite3 *db, const char *path, struct tc_err *err);

/**
 * st_vfs_warm - ask the kernel to read the published store @path into the
 * page cache, in the background (up to an eighth of the memory the process
 * may use): its direct writes left none of it there, and the first queries
 * after an ingest would wait for the disk.  Returns when the reads are
 * queued: a while for a large file (the kernel takes a request queue's
 * worth at a time), so not on an ingest's path (st_library_warm()).
 */
void st_vfs_warm(const char *path);

/** st_vfs_direct_usage - bytes "nx-direct" files wrote directly, in how many
 * system calls, and how often they waited for their thread, so far. */
void st_vfs_direct_usage(uint64_t *bytes, uint64_t *writes, uint64_t *waits);

/**
 * st_vfs_name - the name of the VFS that maps whole files (store/st-vfs.c),
 * registered on first call, for sqlite3_open_v2() of finished trace
 * stores; NULL (the default VFS) when the default one cannot be wrapped.
 */
const char *st_vfs_name(void);

/** st_vfs_mapped_reads - page reads and fetches that VFS answered from its maps so far. */
uint64_t st_vfs_mapped_reads(void);

#define ST_SPILL_RAM 1u	/* st_spill_open(): keep the bytes in memory while the share lasts */

/**
 * st_spill_open - create the unlinked spill file @base@suffix.  With
 * ST_SPILL_RAM in @flags the bytes stay in memory, within a share of the
 * memory the process may use (st_spill_ram()) taken by all such spills
 * together; a spill that finds the share used up writes what it holds to
 * its file and goes on there.  Readers see the same either way.
 * Return: 0, or -errno with @err set.
 */
int st_spill_open(struct st_spill *sp, const char *base, const char *suffix, unsigned flags,
		  struct tc_err *err);
/**
 * st_spill_ram - the bytes ST_SPILL_RAM spills may keep in memory, all
 * together: a sixteenth of tc_mem_total(), at least 64 MiB and at most
 * 4 GiB; NX_SPILL_RAM_MB=N sets it (0: every spill goes to its file).
 */
size_t st_spill_ram(void);
/**
 * st_spill_usage - for the process so far: the bytes its ST_SPILL_RAM spills
 * hold in memory now and the most they held, and the bytes they wrote to
 * their files once the share was used up.
 */
void st_spill_usage(size_t *ram_now, size_t *ram_top, uint64_t *filed);
int st_spill_write(struct st_spill *sp, const void *p, size_t n);
int st_spill_map(struct st_spill *sp);
/* st_spill_drop - unmap the resident pages of a mapped spill (they stay cached); none in memory. */
void st_spill_drop(struct st_spill *sp);
void st_spill_close(struct st_spill *sp);
/**
 * st_spill_release - the reader of @sp (mapped, in memory) will not read
 * its bytes below offset @below again: they may be lent.  Any thread; the
 * reads before it happen before the writes of whoever borrows them.
 */
void st_spill_release(struct st_spill *sp, uint64_t below);
/**
 * st_spill_lend - @n bytes of @sp's memory that its reader released, for
 * the caller to write over, or NULL (none left, or @sp is not in memory).
 * Lent bytes are not the caller's to free(): they go with st_spill_close(),
 * which must come after their last use.  One thread lends at a time.
 */
void *st_spill_lend(struct st_spill *sp, size_t n);
/** st_spill_lent - whether @p lies in bytes @sp has lent (then not to free()). */
bool st_spill_lent(const struct st_spill *sp, const void *p);
/**
 * st_spill_lend_end - @sp's reader is done: what it has not lent leaves
 * the resident set and the share (the mapping shrinks in place; the lent
 * bytes stay until st_spill_close()).  Nothing past them is read any more.
 */
void st_spill_lend_end(struct st_spill *sp);

/* store/st-keys.c: events staged in runs, sorted in the background, merged. */
#define ST_RUN_KEYS ((size_t)1 << 20)	/* events per run: 56 MiB in memory */

struct st_srec {		/* a sorted run's entry, decoded: key and record */
	struct st_key key;
	double value;
	uint64_t args_off;
	uint32_t name, cat, args_len;
	uint8_t kind, flags;
	uint8_t pad[2];
};

struct st_seg {			/* one unit's stretch of a sorted run in the spill */
	uint64_t off;		/* byte offset of its first entry */
	uint32_t n;		/* entries */
	int32_t unit;
};

struct st_keys {
	struct st_key **runs;	/* per run being filled or waiting: keys ... */
	struct st_rec **recs;	/* ... and records, in seq order */
	size_t nruns, caprun, n;
	size_t run;		/* events per run */
	struct st_spill out;	/* the sorted runs, encoded, one after the other */
	/* written by whoever emits a run (the thread, or the caller without
	 * one), read after st_keys_sort_all(): */
	struct st_seg *segs;	/* owned: every run's unit stretches, in run order */
	size_t nsegs, capsegs;
	size_t *runseg;		/* owned: run r's stretches are [runseg[r], runseg[r + 1]) */
	size_t nemitted;
	pthread_t thr;
	bool thr_on, no_thr, quit;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t full;		/* runs [0, full) are complete */
	size_t sorted;		/* runs [0, sorted) are written to @out */
	int rc;			/* first write error */
#define ST_RUNS_FREE 2
	struct st_key *free_keys[ST_RUNS_FREE];	/* emitted runs' buffers, for reuse */
	struct st_rec *free_recs[ST_RUNS_FREE];
	size_t nfree;
	struct st_key *scratch;	/* owned: the run sort's counting pass (ks->run keys) */
};

struct st_mnode {		/* a merge heap node: a run and its head's key */
	struct st_key key;
	size_t run;
};

struct st_rcur {		/* a merge's place in one run */
	const uint8_t *p;	/* the next entry's bytes */
	size_t left;		/* entries left in the current stretch */
	size_t seg, seg_end;	/* the next stretch to open, the end of this merge's ones */
	struct st_srec e;	/* the head: the last entry decoded */
	uint64_t args_end;	/* end of the last args seen in the stretch */
};

struct st_merge {		/* one reader of the sorted runs */
	struct st_rcur *cur;	/* owned: per run */
	struct st_mnode *heap;
	size_t nheap;
	struct st_key lim;	/* the smallest head below the top (valid if nheap > 1) */
	struct st_srec out;	/* what st_keys_merge_next() returned last */
	uint64_t read;		/* encoded bytes consumed so far */
};

void st_keys_init(struct st_keys *ks);
/** st_keys_open - create the sorted-runs spill next to @base; 0 or -errno. */
int st_keys_open(struct st_keys *ks, const char *base, struct tc_err *err);
/** st_keys_push - room for the next event's key and (*@rec) record; fill
 * both before the next call. */
struct st_key *st_keys_push(struct st_keys *ks, struct st_rec **rec);
/** st_keys_sort_all - write the last run and map the file; 0 or -errno. */
int st_keys_sort_all(struct st_keys *ks);
/** st_keys_merge_init - merge the events of units [@unit_lo, @unit_hi]; several
 * merges may read the runs at once, from different threads. */
void st_keys_merge_init(const struct st_keys *ks, struct st_merge *m, int unit_lo, int unit_hi);
/** st_keys_merge_next - the next event in (unit, ts, dur DESC, seq) order; NULL at the end. */
const struct st_srec *st_keys_merge_next(const struct st_keys *ks, struct st_merge *m);
void st_keys_merge_free(struct st_merge *m);
/** st_keys_trim - after st_keys_sort_all(): free the buffers runs were
 * sorted in; the merges still read the runs. */
void st_keys_trim(struct st_keys *ks);
/** st_keys_drop - let the mapped pages read so far go (st_spill_drop). */
void st_keys_drop(struct st_keys *ks);
void st_keys_free(struct st_keys *ks);

/* A reader's edge as staged, followed by its label bytes. */
struct st_redge {
	uint32_t src, dst;	/* seq numbers */
	uint32_t label_len;
	uint8_t kind;
	uint8_t has_label;	/* 0: NULL label */
	uint8_t pad[2];
};

/*
 * The progress of an ingest (st-progress.c).  @sorted and @cancelled are
 * used by both finish parts (st-finish.c), hence atomic; the rest belongs
 * to the writer's thread.
 */
struct st_wprog {
	st_phase_fn fn;
	void *ctx;
	int phase;		/* the last reported; -1: none yet */
	int64_t last_ns, every_ns;	/* the last report; reports within a phase apart */
	double frac;		/* the last whole-ingest fraction reported */
	double cost[ST_PHASE_N];	/* finish phases' shares of the second half */
	_Atomic int64_t sorted;	/* events through the finish's merge */
	atomic_bool cancelled;	/* the function asked to stop: both parts look */
};

struct st_writer {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *ins_str;
	struct st_keys keys;	/* one per event */
	struct st_spill args;
	struct st_spill raw_edges;	/* the reader's edges: struct st_redge + label, by seq */
	struct st_map strings;	/* interned strings */
	uint32_t nstrings;
	struct st_map devkeys, unitkeys;
	struct st_dev *devs;		/* 1-based: devs[0] unused */
	int ndevs, capdevs;
	struct st_unit_def *units;	/* 1-based */
	int nunits, capunits;
	int64_t seq;
	int64_t min_ts, max_end;
	int64_t nedges_raw;
	int64_t nflagged;		/* events whose args carry access sets */
	bool edges_given;		/* the reader brings the derived edges too */
	struct st_edges *edges;		/* during finish: the edges to pack (st-edges.h) */
	struct st_flagged *flagged;	/* during finish: for deps/ (st-flagged.h) */
	struct st_stats stats;
	struct st_wprog prog;
	int failed;			/* first write error */
	struct tc_err ferr;
};

/* Whether a record's args (@len bytes at @off) lie in the mapped args spill: else it has none. */
static inline bool
st_writer_args_mapped(const struct st_writer *w, uint64_t off, uint32_t len)
{
	return len && off + len <= w->args.mapsz;
}

/*
 * st_writer_progress_plan - before the finish phases: @events to sort and
 * write, @analysed of them to derive dependencies from (0: no analysis),
 * @edges explicit edges, for the phases' shares (st-progress.c).
 */
void st_writer_progress_plan(struct st_writer *w, int64_t events, int64_t analysed,
			     int64_t edges);

uint32_t st_hash(const char *s, size_t n);
int st_map_get(struct st_map *m, const char *key, size_t n, uint32_t h);
void st_map_put(struct st_map *m, char *key_owned, uint32_t h, int id);
void st_map_free(struct st_map *m);

int st_exec(sqlite3 *db, const char *sql, struct tc_err *err);
int st_schema_create_trace(sqlite3 *db, struct tc_err *err);
int st_schema_open_catalog(sqlite3 *db, struct tc_err *err);

#endif
