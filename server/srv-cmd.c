/* SPDX-License-Identifier: MIT */
/* server/srv-cmd.c - placeholder until the module lands. */
#include <stdio.h>
#include "cli/cmds.h"
int
cmd_serve(int argc, char **argv)
{
	fprintf(stderr, "neuron-explorer: %s: not available in this build\n", argv[0]);
	return 2;
}
