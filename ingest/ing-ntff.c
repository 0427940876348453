/* SPDX-License-Identifier: MIT */
/* ingest/ing-ntff.c - placeholder until the .ntff reader lands. */
#include <errno.h>
#include "ingest/ingest.h"

int
ing_ntff_read(struct st_writer *w, const char *path, const struct ing_opts *opts,
	      struct tc_err *err)
{
	return tc_err_set(err, -ENOTSUP, "%s: .ntff files are not supported by this build", path);
}
