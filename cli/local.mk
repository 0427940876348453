bin_PROGRAMS += neuron-explorer
neuron_explorer_SOURCES = cli/main.c cli/cmds.h cli/cmd-ingest.c cli/cmd-info.c \
	cli/cmd-convert.c cli/cmd-ntff.c cli/cmd-sql.c cli/cli-progress.h cli/cli-progress.c
neuron_explorer_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
neuron_explorer_LDADD = $(NX_LDADD)
