/* SPDX-License-Identifier: MIT */
/* deps/deps-cmd.c - placeholder until the module lands. */
#include <stdio.h>
#include "cli/cmds.h"
int
cmd_deps(int argc, char **argv)
{
	fprintf(stderr, "neuron-explorer: %s: not available in this build\n", argv[0]);
	return 2;
}
int
cmd_critical_path(int argc, char **argv)
{
	fprintf(stderr, "neuron-explorer: %s: not available in this build\n", argv[0]);
	return 2;
}
