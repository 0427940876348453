/* SPDX-License-Identifier: MIT */
/*
 * store/st-chunk.h - private to store/: the packed event chunks of a trace
 * (schemas/trace.sql, tables event_chunks and event_data).
 *
 * Events are not stored one SQLite row each: a unit's events, in id order,
 * are cut into chunks of at most ST_CHUNK_EVENTS.  A chunk never spans two
 * units.  Its directory row (event_chunks) holds what a query needs to skip
 * it: the id range, unit, first and last start time, the latest end, the
 * depth range and a Bloom filter of the names in it.  Its data row
 * (event_data) holds two blobs:
 *
 *   cols: per event, in id order, each field against the event before it
 *         in the chunk (before the first: ts = ts_first, everything else 0):
 *         byte h: which fields follow, in this order, after the first two:
 *           ST_C_DUR dur, ST_C_KF (flags << 2) | kind, ST_C_DEPTH depth,
 *           ST_C_NAME name, ST_C_CAT cat: each a uvarint when it differs
 *           from the event before (else that event's);
 *           ST_C_ARGS uvarint args_len (else 0: no args);
 *           ST_C_VAL a counter's value when it differs from the event
 *           before's (a non-counter's counts as 0): 8 bytes little-endian
 *           IEEE double, or with ST_C_VINT as well, svarint of the
 *           difference of the two as whole numbers (both whole, |v| <= 2^53,
 *           not -0.0); a counter without ST_C_VAL repeats the value before
 *         uvarint ts - previous ts (the first: 0)
 *         svarint seq - previous seq (the first: seq itself)
 *         [the fields h names]
 *   args: the args texts of the chunk's events, concatenated in id order
 *         (NULL when no event has args).
 *
 * uvarint is LEB128 (7 bits per byte, low first); svarint is zigzag then
 * uvarint.  A counter's sample costs about 5 bytes (h, ts, seq and a small
 * difference), a slice about 7 plus its args.  docs/architecture.md says
 * why (ingest cost, file size).
 */
#ifndef ST_CHUNK_H
#define ST_CHUNK_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <pthread.h>
#include <sqlite3.h>
#include "common/tc.h"

#define ST_CHUNK_EVENTS 256	/* events per chunk, at most */
#define ST_BLOOM_BYTES 32	/* 256-bit name filter per chunk */

/** struct st_cev - one decoded event of a chunk. */
struct st_cev {
	int64_t ts, dur, seq;
	double value;		/* counters; 0 otherwise */
	uint32_t name, cat;
	uint32_t args_off;	/* into the chunk's args blob */
	uint32_t args_len;	/* 0: NULL */
	int32_t depth;
	uint8_t kind, flags;
};

/** struct st_chunk_dir - one event_chunks row. */
struct st_chunk_dir {
	int64_t first;		/* id of the first event (the row id) */
	int64_t ts_first, ts_last, end_max;
	int32_t unit, count;
	int32_t min_depth, max_depth;
	uint8_t bloom[ST_BLOOM_BYTES];
};

/**
 * st_chunk_enc_event - append event @e to the cols blob @cols being built;
 * @prev is the chunk's event before it, NULL for the first (whose ts is the
 * chunk's ts_first).
 */
void st_chunk_enc_event(struct tc_buf *cols, const struct st_cev *e, const struct st_cev *prev);

/**
 * st_chunk_decode - decode @count events of a cols blob into @out (room for
 * @count).  @ts_first is the chunk's.  The args offsets are computed from the
 * args lengths; they end at most at @args_size (the size of the args blob, or
 * a bound when the reader checks each event's against the blob it reads).
 * Return: 0, or -EBADMSG when the blob is short, long or inconsistent.
 */
int st_chunk_decode(const void *cols, size_t size, int count, int64_t ts_first,
		    size_t args_size, struct st_cev *out);

/*
 * The directory again, packed (table event_dir), for the events table's one
 * read of it per connection: through SQL a row costs about 2300
 * instructions (91M for the 39067 rows of a 10M-event trace, most of a
 * CLI query on it), from the packed parts a copy.  Part k (row id k, from
 * 0) holds the rows from k * ST_DIR_PART on, in id order, ST_DIR_REC
 * bytes each, little-endian: first, ts_first, ts_last, end_max (8 bytes
 * each), unit, count, min_depth, max_depth (4 each), then the Bloom
 * filter.  Stores written before it have no such table: their rows are
 * read.
 */
#define ST_DIR_REC (4 * 8 + 4 * 4 + ST_BLOOM_BYTES)
#define ST_DIR_PART 65536

/* The columns of event_chunks that st_chunk_dir_row() reads, in its order. */
#define ST_DIR_COLS "id, unit, count, ts_first, ts_last, end_max, min_depth, max_depth, names"

/**
 * st_chunk_dir_row - the event_chunks row @s stands on (columns ST_DIR_COLS)
 * into *@d.  Return: 0, or -EBADMSG when its name filter is not
 * ST_BLOOM_BYTES long (d->first is set).
 */
int st_chunk_dir_row(sqlite3_stmt *s, struct st_chunk_dir *d);

/** st_chunk_dir_put - directory row @d as ST_DIR_REC bytes at @p. */
void st_chunk_dir_put(uint8_t *p, const struct st_chunk_dir *d);
/** st_chunk_dir_get - the row st_chunk_dir_put() wrote at @p into *@d. */
void st_chunk_dir_get(const uint8_t *p, struct st_chunk_dir *d);

/** st_bloom_add - set name @name's bits in @bloom. */
void st_bloom_add(uint8_t *bloom, uint32_t name);
/** st_bloom_has - false when @name is certainly not in the chunk. */
bool st_bloom_has(const uint8_t *bloom, uint32_t name);

/*
 * Writing chunks from a second thread (store/st-chunk-out.c): st_writer_finish
 * encodes chunks on its thread and hands each one over; the SQLite inserts,
 * the blob copies into pages and their writes run on the other core.  Any
 * other use of the connection meanwhile goes between st_chunk_out_lock()
 * and st_chunk_out_unlock().
 */
#define ST_CHUNK_QLEN 32	/* chunks in flight */
#define ST_CHUNK_BATCH 16	/* chunks queued before the thread is woken */
#define ST_CHUNK_WRITEBACK (64u << 20)	/* chunk bytes between early writebacks */

struct st_chunk_job {
	struct st_chunk_dir dir;
	struct tc_buf cols, args;
};

struct st_chunk_out {
	sqlite3 *db;			/* borrowed */
	sqlite3_stmt *ins_chunk, *ins_data;
	pthread_t thr;
	bool thr_on, quit;
	bool idle;			/* the thread waits for a batch */
	unsigned nwait;			/* writers waiting for a free slot */
	int fd;				/* the store file, for early writeback; -1 */
	size_t unsynced;		/* chunk bytes inserted since the last one */
	pthread_mutex_t mu;		/* the queue */
	pthread_mutex_t dbmu;		/* the connection */
	pthread_cond_t cv_have, cv_free;
	struct st_chunk_job q[ST_CHUNK_QLEN];
	unsigned head, n;
	int rc;				/* first failure */
	char msg[256];
	struct st_chunk_dir *dirs;	/* the rows inserted, for event_dir (under dbmu) */
	size_t ndirs, cdirs;
};

/** st_chunk_out_start - prepare the inserts on @db and start the thread
 * (writes inline when no thread can be started).  0 or -errno with @err. */
int st_chunk_out_start(struct st_chunk_out *o, sqlite3 *db, struct tc_err *err);
/**
 * st_chunk_out_put - queue one chunk.  @cols and @args are swapped with
 * empty buffers (their storage is reused), @dir is copied.  An empty @args
 * is stored as NULL.
 * Return: 0, or the first failure of an earlier write.
 */
int st_chunk_out_put(struct st_chunk_out *o, const struct st_chunk_dir *dir,
		     struct tc_buf *cols, struct tc_buf *args);
void st_chunk_out_lock(struct st_chunk_out *o);
void st_chunk_out_unlock(struct st_chunk_out *o);
/**
 * st_chunk_out_finish - write what is queued, stop the thread, then, when
 * @write_dir and every chunk went in, write event_dir from the directory
 * rows inserted (kept as they went in: no read back); free everything.
 * Safe on a zeroed or failed @o.  0 or -errno with @err.
 */
int st_chunk_out_finish(struct st_chunk_out *o, bool write_dir, struct tc_err *err);

/**
 * st_chunk_dir_write - (re)write event_dir of @db from the @n directory
 * rows @dirs (sorted here by id).  Return: 0 or -EIO with @err set.
 */
int st_chunk_dir_write(sqlite3 *db, struct st_chunk_dir *dirs, size_t n, struct tc_err *err);

/**
 * st_chunk_dir_pack - st_chunk_dir_write() from @db's event_chunks rows (a
 * store packed by hand, or one whose event_dir is to be rebuilt).
 * Return: 0 or -EIO with @err set.
 */
int st_chunk_dir_pack(sqlite3 *db, struct tc_err *err);

#endif
