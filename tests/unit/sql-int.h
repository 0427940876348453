/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/sql-int.h - the unit tests' one-number SQL query: the first
 * column of the first row of @sql as an integer; -1 when there is no row,
 * -999 (and a TAP comment) when the statement does not prepare.
 */
#ifndef TESTS_SQL_INT_H
#define TESTS_SQL_INT_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

static inline int64_t
q1(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		printf("# sql error: %s: %s\n", sql, sqlite3_errmsg(db));
		return -999;
	}
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

#endif
