/* SPDX-License-Identifier: MIT */
/* store/st-vtab.c - placeholder until the events virtual table lands. */
#include "store/store-int.h"

int
st_sql_register(sqlite3 *db)
{
	(void)db;
	return st_edges_register(db);
}
