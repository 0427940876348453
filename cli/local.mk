bin_PROGRAMS += neuron-explorer
neuron_explorer_SOURCES = cli/main.c cli/cmds.h cli/cmd-ingest.c cli/cmd-info.c \
	cli/cmd-convert.c cli/cmd-ntff.c cli/cmd-sql.c cli/cli-thp.c
neuron_explorer_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
neuron_explorer_LDADD = $(NX_LDADD)

# What the commands share with capture/'s (upload --wait): in libnx.a.
noinst_LIBRARIES += libcli.a
libcli_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
libcli_a_SOURCES = cli/cli-progress.h cli/cli-progress.c
