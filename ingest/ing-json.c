/* SPDX-License-Identifier: MIT */
/* ingest/ing-json.c - placeholder until the JSON reader lands. */
#include <errno.h>
#include "ingest/ingest.h"

int
ing_json_read(struct st_writer *w, struct tc_input *in, const struct ing_opts *opts,
	      struct tc_err *err)
{
	return tc_err_set(err, -ENOTSUP, "%s: JSON traces are not supported by this build",
			  tc_input_name(in));
}
