/* SPDX-License-Identifier: MIT */
/*
 * cli/cli-progress.c - an ingest's progress on stderr for the commands that
 * load traces (ingest, convert): on a terminal one line, rewritten in place
 * and erased at the end; elsewhere, when asked, a line per phase.
 */
#include <stdio.h>
#include <unistd.h>
#include "cli/cli-progress.h"

void
cli_progress_init(struct cli_progress *g, const char *label, int mode)
{
	g->label = label;
	g->tty = isatty(STDERR_FILENO);
	g->on = mode < 0 ? g->tty : mode;
	g->phase = -1;
	g->pct = -1;
	g->shown = false;
}

/* Show @phase (a name) at @pct percent, as the mode wants it. */
static void
cli_progress_show(struct cli_progress *g, const char *phase, int pct, bool changed)
{
	if (g->tty && (changed || pct != g->pct))
		fprintf(stderr, "\r%s: %3d%% %-12s", g->label, pct, phase);
	else if (!g->tty && changed)
		fprintf(stderr, "%s: %s (%d%%)\n", g->label, phase, pct);
	g->pct = pct;
	g->shown = true;
}

int
cli_progress(void *ctx, const struct st_progress *p)
{
	struct cli_progress *g = ctx;

	if (!g->on)
		return 0;
	cli_progress_show(g, st_phase_name(p->phase), (int)(p->frac * 100), p->phase != g->phase);
	g->phase = p->phase;
	return 0;
}

void
cli_progress_step(struct cli_progress *g, const char *what)
{
	if (!g->on)
		return;
	cli_progress_show(g, what, 100, true);
	g->phase = ST_PHASE_N;	/* past the ingest's own */
}

void
cli_progress_end(struct cli_progress *g)
{
	if (g->on && g->tty && g->shown)
		fprintf(stderr, "\r\033[K");
	g->shown = false;
}
