/* SPDX-License-Identifier: MIT */
/* cli/cmd-ntff.c - placeholder until the module lands. */
#include <stdio.h>
#include "cli/cmds.h"
int
cmd_ntff(int argc, char **argv)
{
	fprintf(stderr, "neuron-explorer: %s: not available in this build\n", argv[0]);
	return 2;
}
