# SPDX-License-Identifier: MIT
# fuzz/store.mk - the damaged-store libFuzzer target (under --enable-fuzzing)
# and the replay of its committed corpus (always, by make check).
check_PROGRAMS += fuzz/fuzz-store-replay
TESTS += fuzz/fuzz-store-replay
fuzz_fuzz_store_replay_SOURCES = fuzz/fuzz-store.c fuzz/fuzz-replay.c fuzz/fuzz-replay.h
fuzz_fuzz_store_replay_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_REPLAY_MAIN
fuzz_fuzz_store_replay_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
fuzz_fuzz_store_replay_LDADD = $(NX_LDADD)
EXTRA_DIST += fuzz/corpus/store

if ENABLE_FUZZING
noinst_PROGRAMS += fuzz/fuzz-store
fuzz_fuzz_store_SOURCES = fuzz/fuzz-store.c
fuzz_fuzz_store_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS) -fsanitize=fuzzer
fuzz_fuzz_store_LDFLAGS = -fsanitize=fuzzer
fuzz_fuzz_store_LDADD = $(NX_LDADD)
endif
