/* SPDX-License-Identifier: MIT */
/* store/store-int.h - private to store/: the writer's state. */
#ifndef ST_STORE_INT_H
#define ST_STORE_INT_H

#include "store/store.h"

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
	/* filled by finish */
	int64_t count, first, last, overlaps;
	int max_depth;
};

struct st_writer {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *ins_raw, *ins_edge, *ins_str;
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
	struct st_stats stats;
	int failed;			/* first write error */
	struct tc_err ferr;
};

uint32_t st_hash(const char *s, size_t n);
int st_map_get(struct st_map *m, const char *key, size_t n, uint32_t h);
void st_map_put(struct st_map *m, char *key_owned, uint32_t h, int id);
void st_map_free(struct st_map *m);

int st_exec(sqlite3 *db, const char *sql, struct tc_err *err);
int st_schema_create_trace(sqlite3 *db, struct tc_err *err);
int st_schema_open_catalog(sqlite3 *db, struct tc_err *err);

#endif
