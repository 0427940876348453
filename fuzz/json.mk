# SPDX-License-Identifier: MIT
# fuzz/json.mk - the JSON reader's libFuzzer target (under --enable-fuzzing)
# and the replay of its committed corpus (always, by make check).
check_PROGRAMS += fuzz/fuzz-json-replay
TESTS += fuzz/fuzz-json-replay
fuzz_fuzz_json_replay_SOURCES = fuzz/fuzz-json.c fuzz/fuzz-replay.c fuzz/fuzz-replay.h
fuzz_fuzz_json_replay_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_REPLAY_MAIN
fuzz_fuzz_json_replay_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
fuzz_fuzz_json_replay_LDADD = $(NX_LDADD)
EXTRA_DIST += fuzz/corpus/json fuzz/json.dict

if ENABLE_FUZZING
noinst_PROGRAMS += fuzz/fuzz-json
fuzz_fuzz_json_SOURCES = fuzz/fuzz-json.c
fuzz_fuzz_json_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) -fsanitize=fuzzer
fuzz_fuzz_json_LDFLAGS = -fsanitize=fuzzer
fuzz_fuzz_json_LDADD = $(NX_LDADD)
endif
