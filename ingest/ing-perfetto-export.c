/* SPDX-License-Identifier: MIT */
/* ingest/ing-perfetto-export.c - finished trace store -> plain Perfetto trace. */
#include <errno.h>
#include "ingest/perfetto-int.h"

int
pf_export_pftrace(sqlite3 *db, FILE *out, const char *out_name, struct tc_err *err)
{
	return tc_err_set(err, -ENOTSUP, "%s: Perfetto export not written yet", out_name);
}
