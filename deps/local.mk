# deps/: dependency analysis (access sets, semaphores, chains, critical path).
noinst_LIBRARIES += libdeps.a
libdeps_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
libdeps_a_SOURCES = deps/deps.h deps/deps-int.h deps/deps-access.c deps/deps-intervals.c \
	deps/deps-engine.c deps/deps-derive.c deps/deps-query.h deps/deps-query.c \
	deps/deps-critical.c deps/deps-chain.c deps/deps-cmd.c

check_PROGRAMS += tests/unit/test-deps-engine
TESTS += tests/unit/test-deps-engine
tests_unit_test_deps_engine_SOURCES = tests/unit/test-deps-engine.c tests/tap.h
tests_unit_test_deps_engine_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_deps_engine_LDADD = $(NX_LDADD)

check_PROGRAMS += tests/unit/test-deps-query
TESTS += tests/unit/test-deps-query
tests_unit_test_deps_query_SOURCES = tests/unit/test-deps-query.c tests/tap.h
tests_unit_test_deps_query_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_deps_query_LDADD = $(NX_LDADD)

check_PROGRAMS += tests/unit/test-deps-feed
TESTS += tests/unit/test-deps-feed
tests_unit_test_deps_feed_SOURCES = tests/unit/test-deps-feed.c tests/tap.h
tests_unit_test_deps_feed_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_deps_feed_LDADD = $(NX_LDADD)

check_PROGRAMS += tests/unit/test-deps-edges
TESTS += tests/unit/test-deps-edges
tests_unit_test_deps_edges_SOURCES = tests/unit/test-deps-edges.c tests/tap.h
tests_unit_test_deps_edges_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_deps_edges_LDADD = $(NX_LDADD)

TESTS += tests/deps/rules.sh tests/deps/critical-path.sh tests/deps/real.sh tests/deps/spill.sh \
	tests/deps/cuda-sync.sh tests/deps/progress.sh tests/deps/few-flows.sh \
	tests/deps/staging.sh tests/deps/lend.sh tests/deps/grid.sh tests/deps/file-order.sh
EXTRA_DIST += tests/deps/deps-lib.sh tests/deps/rules.sh tests/deps/critical-path.sh tests/deps/real.sh \
	tests/deps/spill.sh tests/deps/cuda-sync.sh tests/deps/progress.sh tests/deps/few-flows.sh \
	tests/deps/staging.sh tests/deps/lend.sh tests/deps/grid.sh tests/deps/file-order.sh

# The synthetic trace generator for bench/deps-bench.sh (tests/deps-gen.c).
noinst_PROGRAMS += tests/deps-gen
tests_deps_gen_SOURCES = tests/deps-gen.c
EXTRA_DIST += bench/deps-bench.sh

check_PROGRAMS += tests/unit/test-deps-par
TESTS += tests/unit/test-deps-par
tests_unit_test_deps_par_SOURCES = tests/unit/test-deps-par.c tests/tap.h
tests_unit_test_deps_par_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_deps_par_LDADD = $(NX_LDADD)
