noinst_LIBRARIES += libcommon.a
libcommon_a_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS) $(CRYPTO_CFLAGS) $(JANSSON_CFLAGS)
libcommon_a_SOURCES = common/tc.h common/tc-varint.h common/tc-hash.h common/tc-sort.h common/tc-rank.h common/tc-err.c common/tc-mem.c common/tc-buf.c \
	common/tc-arena.c common/tc-input.c common/tc-util.c common/tc-copy.c common/tc-limits.c common/tc-wbehind.c \
	common/tc-jw.h common/tc-jw.c common/tc-json.h common/tc-json.c

check_PROGRAMS += tests/unit/test-common
TESTS += tests/unit/test-common
tests_unit_test_common_SOURCES = tests/unit/test-common.c tests/tap.h
tests_unit_test_common_LDADD = $(NX_LDADD)

check_PROGRAMS += tests/unit/test-tc-jw
TESTS += tests/unit/test-tc-jw
tests_unit_test_tc_jw_SOURCES = tests/unit/test-tc-jw.c tests/tap.h
tests_unit_test_tc_jw_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_tc_jw_LDADD = $(NX_LDADD)
