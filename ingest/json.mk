# SPDX-License-Identifier: MIT
# Chrome/Kineto JSON reader (ingest/ing-json*.c) and its tests.
libingest_a_SOURCES += ingest/ing-json.c ingest/ing-json-scan.c ingest/ing-json-val.c \
	ingest/ing-json-sync.c ingest/ing-json-export.c \
	ingest/json-int.h

check_PROGRAMS += tests/unit/test-json
TESTS += tests/unit/test-json
tests_unit_test_json_SOURCES = tests/unit/test-json.c tests/tap.h tests/unit/sql-int.h
tests_unit_test_json_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_json_LDADD = $(NX_LDADD)

# Shell tests through the real binary (golden counts vs a Python oracle, bad inputs, torch).
TESTS += tests/json/golden.sh tests/json/bad-input.sh tests/json/torch.sh tests/json/edge-kinds.sh \
	tests/json/sql-cli.sh
EXTRA_DIST += tests/json tests/data/json
