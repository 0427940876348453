/* SPDX-License-Identifier: MIT */
/* capture/cap-cmd.c - placeholder until the module lands. */
#include <stdio.h>
#include "cli/cmds.h"
int
cmd_capture(int argc, char **argv)
{
	fprintf(stderr, "neuron-explorer: %s: not available in this build\n", argv[0]);
	return 2;
}
int
cmd_env(int argc, char **argv)
{
	fprintf(stderr, "neuron-explorer: %s: not available in this build\n", argv[0]);
	return 2;
}
int
cmd_upload(int argc, char **argv)
{
	fprintf(stderr, "neuron-explorer: %s: not available in this build\n", argv[0]);
	return 2;
}
