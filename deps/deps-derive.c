/* SPDX-License-Identifier: MIT */
/* deps/deps-derive.c - placeholder: derives nothing yet. */
#include "deps/deps.h"

int
deps_derive(struct st_writer *w, sqlite3 *db, struct st_stats *stats, struct tc_err *err)
{
	return 0;
}
