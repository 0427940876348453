/* SPDX-License-Identifier: MIT */
/*
 * server/srv-sums.h - private to server/: a process-wide LRU cache of
 * decoded summary levels (one unit, one level, all its buckets) of ready
 * traces, so that repeated full-span and wide timeline views read memory
 * instead of stepping thousands of SQLite rows.  A ready trace never
 * changes and trace ids are never reused, so entries need no invalidation:
 * those of a deleted trace age out.
 */
#ifndef SRV_SUMS_H
#define SRV_SUMS_H

#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>

/* Levels of more buckets than this are read from SQLite each time. */
#define SRV_SUMS_MAX_ROWS 65536

/** struct srv_sum - one summaries row. */
struct srv_sum {
	int64_t bucket, count, busy, dom_ns;
	double vmin, vmax;
	uint32_t dom_name;
	bool has_v;
};

/** struct srv_sums - one decoded level; read-only while held. */
struct srv_sums {
	const struct srv_sum *row;	/* by bucket */
	size_t n;
};

/**
 * srv_sums_get - the rows of (@trace, @unit, @level), from the cache or
 * read with @all ("SELECT bucket, count, busy, dom_ns, vmin, vmax, dom_name
 * FROM summaries WHERE unit_id = ?1 AND level = ?2 ORDER BY bucket").
 * Return: the level (give it back with srv_sums_put()), or NULL when it has
 * more than SRV_SUMS_MAX_ROWS rows or cannot be read.
 */
const struct srv_sums *srv_sums_get(const char *trace, int64_t unit, int level,
				    sqlite3_stmt *all);
/** srv_sums_put - release a level from srv_sums_get(); NULL is a no-op. */
void srv_sums_put(const struct srv_sums *s);
/** srv_sums_read - decode the current row of a summaries statement (columns as above). */
void srv_sums_read(struct srv_sum *r, sqlite3_stmt *st);

#endif /* SRV_SUMS_H */
