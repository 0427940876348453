/* SPDX-License-Identifier: MIT */
/*
 * store/st-schema.c - create and migrate the two database kinds from the SQL
 * in schemas/ (compiled in as strings).
 */
#include <errno.h>
#include <stdio.h>
#include "store/store-int.h"
#include "store/st-schema-sql.h"

int
st_exec(sqlite3 *db, const char *sql, struct tc_err *err)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		tc_err_set(err, -EIO, "sqlite: %s", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

int
st_schema_create_trace(sqlite3 *db, struct tc_err *err)
{
	char pragma[64];
	int rc;

	rc = st_exec(db, st_trace_sql, err);
	if (rc < 0)
		return rc;
	snprintf(pragma, sizeof(pragma), "PRAGMA user_version=%d", ST_TRACE_SCHEMA_VERSION);
	return st_exec(db, pragma, err);
}

static int
st_user_version(sqlite3 *db)
{
	sqlite3_stmt *st;
	int v = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/*
 * Catalog migrations: st_catalog_steps[N] takes version N to N+1.  Version 0
 * is an empty database.  Add a step (never edit an old one) when the catalog
 * changes, and bump ST_CATALOG_SCHEMA_VERSION.
 */
static const char *const st_catalog_steps[] = {
	st_catalog_sql,
};

int
st_schema_open_catalog(sqlite3 *db, struct tc_err *err)
{
	int v = st_user_version(db);
	char pragma[64];
	int rc = 0;

	if (v < 0)
		return tc_err_set(err, -EIO, "catalog: cannot read version: %s", sqlite3_errmsg(db));
	if (v > ST_CATALOG_SCHEMA_VERSION)
		return tc_err_set(err, -EPROTO,
				  "catalog: version %d is newer than this build understands (%d)",
				  v, ST_CATALOG_SCHEMA_VERSION);
	for (; v < ST_CATALOG_SCHEMA_VERSION; v++) {
		rc = st_exec(db, "BEGIN IMMEDIATE", err);
		if (rc < 0)
			return rc;
		rc = st_exec(db, st_catalog_steps[v], err);
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version=%d", v + 1);
		if (!rc)
			rc = st_exec(db, pragma, err);
		if (rc < 0) {
			st_exec(db, "ROLLBACK", NULL);
			return rc;
		}
		rc = st_exec(db, "COMMIT", err);
		if (rc < 0)
			return rc;
	}
	return 0;
}
