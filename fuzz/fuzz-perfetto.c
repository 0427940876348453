/* SPDX-License-Identifier: MIT */
/*
 * fuzz/fuzz-perfetto.c - libFuzzer target for the Perfetto protobuf reader
 * and the .ntff container: the input bytes go through tc_input_open_mem()
 * and ing_perfetto_read() into a real trace store on a temporary file
 * (finished when the read succeeds); inputs that start with the .ntff magic
 * are written to a file and go through ing_ntff_read().  Every failure must
 * carry a message.  The format detector reads the first 4 KiB too (what the
 * server gives it).  Built with -DFUZZ_REPLAY_MAIN it is a TAP program that
 * feeds every file of fuzz/corpus/perfetto to the same entry point (make
 * check runs it).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/library.h"
#include "ingest/ingest.h"
#include "ingest/ntff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char db_path[256], ntff_path[256];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st_writer *w = NULL;
	struct tc_input *in = NULL;
	struct tc_err err = { 0 };
	struct st_stats st;
	int rc;

	if (!db_path[0]) {
		const char *t = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

		snprintf(db_path, sizeof(db_path), "%s/fuzz-perfetto-%d.db", t, (int)getpid());
		snprintf(ntff_path, sizeof(ntff_path), "%s/fuzz-perfetto-%d.ntff", t, (int)getpid());
	}
	(void)ing_detect(data, size < 4096 ? size : 4096);
	if (st_writer_open(&w, db_path, &err))
		abort();	/* the harness, not the input */
	if (ntff_is_ntff(data, size)) {
		FILE *f = fopen(ntff_path, "wb");

		if (!f || fwrite(data, 1, size, f) != size || fclose(f))
			abort();
		rc = ing_ntff_read(w, ntff_path, NULL, &err);
		unlink(ntff_path);
	} else {
		if (tc_input_open_mem(&in, data, size, "fuzz.pftrace", &err)) {
			st_writer_abort(w);
			return 0;
		}
		rc = ing_perfetto_read(w, in, NULL, &err);
		tc_input_close(in);
	}
	if (rc == 0) {
		if (st_writer_finish(w, &st, &err) == 0)
			unlink(db_path);
	} else {
		if (!err.msg[0] || strchr(err.msg, '\n'))
			abort();	/* every failure must say why, in one line */
		st_writer_abort(w);
	}
	return 0;
}

#ifdef FUZZ_REPLAY_MAIN
#include "fuzz/fuzz-replay.h"
FUZZ_REPLAY("perfetto")
#endif
