/* SPDX-License-Identifier: MIT */
/*
 * cli/cli-progress.h - an ingest's progress on stderr (cli/cli-progress.c),
 * for the --progress / --no-progress of ingest and convert, and for
 * upload --wait (the server's phases).
 */
#ifndef CLI_CLI_PROGRESS_H
#define CLI_CLI_PROGRESS_H

#include <stdbool.h>
#include "store/store.h"

/**
 * struct cli_progress - what one file's progress line shows.
 * @label: the file's name (borrowed); @tty: stderr is a terminal;
 * @on: shown at all; @phase, @pct: the last shown; @shown: a line is up.
 */
struct cli_progress {
	const char *label;
	bool tty, on, shown;
	char phase[24];
	int pct;
};

/* The --progress and --no-progress entries of a getopt_long() table: 'p' and 'P'. */
#define CLI_PROGRESS_OPTIONS \
	{ "progress", no_argument, NULL, 'p' }, { "no-progress", no_argument, NULL, 'P' }

/**
 * cli_progress_init - for the file @label: @mode 1 (--progress), 0
 * (--no-progress) or -1 (on when stderr is a terminal).
 */
void cli_progress_init(struct cli_progress *g, const char *label, int mode);

/**
 * cli_progress_named - show phase @phase (a name, copied) at @frac (0 to 1):
 * on a terminal when either changed, elsewhere when the phase did.
 */
void cli_progress_named(struct cli_progress *g, const char *phase, double frac);

/** cli_progress - a st_phase_fn (never cancels): @ctx is the struct cli_progress. */
int cli_progress(void *ctx, const struct st_progress *p);

/** cli_progress_step - a step of the command's own after the ingest (e.g. "exporting"). */
void cli_progress_step(struct cli_progress *g, const char *what);

/** cli_progress_end - erase the terminal line before the command's result. */
void cli_progress_end(struct cli_progress *g);

#endif /* CLI_CLI_PROGRESS_H */
