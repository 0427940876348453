# deps/: dependency analysis (access sets, semaphores, chains, critical path).
noinst_LIBRARIES += libdeps.a
libdeps_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
libdeps_a_SOURCES = deps/deps.h deps/deps-derive.c deps/deps-cmd.c
