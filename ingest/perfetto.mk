# Perfetto protobuf reader/exporter and the .ntff container (owned by the
# Perfetto/ntff work).  The protobuf-c code is generated from
# schemas/perfetto.proto into the build tree (works in VPATH/distcheck).
libingest_a_SOURCES += ingest/ing-perfetto.c ingest/ing-perfetto-ahead.c ingest/ing-perfetto-dec.c ingest/ing-perfetto-map.c \
	ingest/ing-perfetto-export.c ingest/ing-perfetto-nx.c ingest/perfetto-int.h \
	ingest/ing-ntff.c ingest/ntff.c ingest/ntff.h
# Generated into ingest/ of the build tree (not schemas/, which is
# distributed as a directory and must not pick up build products).
nodist_libingest_a_SOURCES = ingest/perfetto.pb-c.c ingest/perfetto.pb-c.h
BUILT_SOURCES += ingest/perfetto.pb-c.c ingest/perfetto.pb-c.h
CLEANFILES += ingest/perfetto.pb-c.c ingest/perfetto.pb-c.h
# schemas/perfetto.proto is distributed with schemas/ (top-level EXTRA_DIST)

ingest/perfetto.pb-c.h: ingest/perfetto.pb-c.c
	@test -f $@ || { rm -f $<; $(MAKE) $(AM_MAKEFLAGS) $<; }
ingest/perfetto.pb-c.c: $(top_srcdir)/schemas/perfetto.proto
	$(AM_V_GEN)$(MKDIR_P) ingest && \
	  $(PROTOC_C) --proto_path=$(top_srcdir)/schemas --c_out=ingest \
	    $(top_srcdir)/schemas/perfetto.proto

# Tests.
check_PROGRAMS += tests/unit/test-perfetto tests/unit/test-ntff
TESTS += tests/unit/test-perfetto tests/unit/test-ntff \
	tests/perfetto/golden.sh tests/perfetto/ntff.sh tests/perfetto/convert.sh \
	tests/perfetto/errors.sh tests/perfetto/roundtrip.sh tests/perfetto/ntff-spec.sh \
	tests/perfetto/threads.sh
tests_unit_test_perfetto_SOURCES = tests/unit/test-perfetto.c tests/tap.h
nodist_tests_unit_test_perfetto_SOURCES = ingest/perfetto.pb-c.h
tests_unit_test_perfetto_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(PROTOBUFC_CFLAGS) $(ZLIB_CFLAGS)
tests_unit_test_perfetto_LDADD = $(NX_LDADD)
tests_unit_test_ntff_SOURCES = tests/unit/test-ntff.c tests/tap.h
tests_unit_test_ntff_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(ZLIB_CFLAGS)
tests_unit_test_ntff_LDADD = $(NX_LDADD)
EXTRA_DIST += tests/perfetto

# Fuzzing: the libFuzzer target under --enable-fuzzing; its committed corpus
# (fuzz/corpus/perfetto) is replayed by make check in every build.
check_PROGRAMS += fuzz/fuzz-perfetto-replay
TESTS += fuzz/fuzz-perfetto-replay
fuzz_fuzz_perfetto_replay_SOURCES = fuzz/fuzz-perfetto.c fuzz/fuzz-replay.c fuzz/fuzz-replay.h
fuzz_fuzz_perfetto_replay_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_REPLAY_MAIN
fuzz_fuzz_perfetto_replay_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
fuzz_fuzz_perfetto_replay_LDADD = $(NX_LDADD)
EXTRA_DIST += fuzz/corpus/perfetto

if ENABLE_FUZZING
noinst_PROGRAMS += fuzz/fuzz-perfetto
fuzz_fuzz_perfetto_SOURCES = fuzz/fuzz-perfetto.c
fuzz_fuzz_perfetto_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) -fsanitize=fuzzer
fuzz_fuzz_perfetto_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_perfetto_LDADD = $(NX_LDADD)
endif
