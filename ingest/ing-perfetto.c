/* SPDX-License-Identifier: MIT */
/* ingest/ing-perfetto.c - placeholder until the Perfetto reader lands. */
#include <errno.h>
#include "ingest/ingest.h"

int
ing_perfetto_read(struct st_writer *w, struct tc_input *in, const struct ing_opts *opts,
		  struct tc_err *err)
{
	return tc_err_set(err, -ENOTSUP, "%s: Perfetto protobuf traces are not supported by this build",
			  tc_input_name(in));
}
