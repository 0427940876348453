/* SPDX-License-Identifier: MIT */
/*
 * cli/cli-progress.c - an ingest's progress on stderr for the commands that
 * load traces or wait for a server to (ingest, convert, upload --wait): on a
 * terminal one line, rewritten in place and erased at the end; elsewhere,
 * when asked, a line per phase.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli-progress.h"

void
cli_progress_init(struct cli_progress *g, const char *label, int mode)
{
	memset(g, 0, sizeof(*g));
	g->label = label;
	g->tty = isatty(STDERR_FILENO);
	g->on = mode < 0 ? g->tty : mode;
	g->pct = -1;
}

void
cli_progress_named(struct cli_progress *g, const char *phase, double frac)
{
	int pct = (int)((frac < 0 ? 0 : frac > 1 ? 1 : frac) * 100);
	bool changed = strncmp(phase, g->phase, sizeof(g->phase) - 1) != 0;

	if (!g->on)
		return;
	if (g->tty && (changed || pct != g->pct))
		fprintf(stderr, "\r%s: %3d%% %-12s", g->label, pct, phase);
	else if (!g->tty && changed)
		fprintf(stderr, "%s: %s (%d%%)\n", g->label, phase, pct);
	snprintf(g->phase, sizeof(g->phase), "%s", phase);
	g->pct = pct;
	g->shown = true;
}

int
cli_progress(void *ctx, const struct st_progress *p)
{
	cli_progress_named(ctx, st_phase_name(p->phase), p->frac);
	return 0;
}

void
cli_progress_step(struct cli_progress *g, const char *what)
{
	cli_progress_named(g, what, 1);
}

void
cli_progress_end(struct cli_progress *g)
{
	if (g->on && g->tty && g->shown)
		fprintf(stderr, "\r\033[K");
	g->shown = false;
}
