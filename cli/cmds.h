/* SPDX-License-Identifier: MIT */
/*
 * cli/cmds.h - the subcommands of the neuron-explorer binary.  Each takes the
 * arguments after its name (argv[0] is the subcommand) and returns the exit
 * status.  Each prints its own --help.
 */
#ifndef CLI_CMDS_H
#define CLI_CMDS_H

#include <stdbool.h>

int cmd_ingest(int argc, char **argv);		/* cli/cmd-ingest.c */
int cmd_info(int argc, char **argv);		/* cli/cmd-info.c */
int cmd_convert(int argc, char **argv);		/* cli/cmd-convert.c */
int cmd_sql(int argc, char **argv);		/* cli/cmd-sql.c */
int cmd_ntff(int argc, char **argv);		/* cli/cmd-ntff.c */
int cmd_serve(int argc, char **argv);		/* server/srv-cmd.c */
int cmd_capture(int argc, char **argv);		/* capture/cap-cmd.c */
int cmd_env(int argc, char **argv);		/* capture/cap-env.c */
int cmd_upload(int argc, char **argv);		/* capture/cap-upload.c */
int cmd_deps(int argc, char **argv);		/* deps/deps-cmd.c */
int cmd_critical_path(int argc, char **argv);	/* deps/deps-cmd.c */

/** cli_default_data_dir - $NX_DATA, else $XDG_DATA_HOME/neuron-explorer, else ~/.local/share/neuron-explorer. */
const char *cli_default_data_dir(void);

/**
 * cli_trace_db - the store file of trace @id in data directory @data, or
 * @id itself when @file_ok and it names a file.  Return: the path (the
 * caller frees it), or NULL after a one-line error for command @cmd: @id
 * is not a trace id (nor a file), or there is no such trace in @data.
 */
char *cli_trace_db(const char *cmd, const char *data, const char *id, bool file_ok);

/**
 * cli_thp_reexec - exec this program again, same @argv (argv of main()), with
 * glibc.malloc.hugetlb=1 added to GLIBC_TUNABLES, where that pays and is
 * allowed (cli/cli-thp.c says when); returns when it does not exec.
 */
void cli_thp_reexec(char **argv);

#endif /* CLI_CMDS_H */
