noinst_LIBRARIES += libstore.a
libstore_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
libstore_a_SOURCES = store/store.h store/store-int.h store/library.h \
	store/st-chunk.h store/st-chunk.c store/st-chunk-out.c store/st-conn.c store/st-edges.h store/st-edges.c store/st-flagged.h store/st-flagged.c store/st-keys.c store/st-vtab.c store/st-writer.c store/st-spill.c store/st-finish.c store/st-read.c store/st-names.c store/st-progress.c \
	store/st-library.c store/st-schema.c store/st-vfs.c store/st-vfs-direct.c store/st-pcache.c
BUILT_SOURCES += store/st-schema-sql.h
CLEANFILES += store/st-schema-sql.h
store/st-schema-sql.h: $(top_srcdir)/schemas/trace.sql $(top_srcdir)/schemas/catalog.sql
	$(AM_V_GEN)mkdir -p store && { \
	  printf 'static const char st_trace_sql[] =\n'; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $(top_srcdir)/schemas/trace.sql; \
	  printf ';\nstatic const char st_catalog_sql[] =\n'; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $(top_srcdir)/schemas/catalog.sql; \
	  printf ';\n'; } > $@

check_PROGRAMS += tests/unit/test-store
TESTS += tests/unit/test-store
tests_unit_test_store_SOURCES = tests/unit/test-store.c tests/tap.h tests/unit/sql-int.h
tests_unit_test_store_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_store_LDADD = $(NX_LDADD)

check_PROGRAMS += tests/unit/test-progress
TESTS += tests/unit/test-progress
tests_unit_test_progress_SOURCES = tests/unit/test-progress.c tests/tap.h
tests_unit_test_progress_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_progress_LDADD = $(NX_LDADD)

check_PROGRAMS += tests/unit/test-vtab tests/unit/test-chunk
TESTS += tests/unit/test-vtab tests/unit/test-chunk
tests_unit_test_chunk_SOURCES = tests/unit/test-chunk.c tests/tap.h
tests_unit_test_chunk_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_chunk_LDADD = $(NX_LDADD)
tests_unit_test_vtab_SOURCES = tests/unit/test-vtab.c tests/tap.h tests/unit/sql-int.h
tests_unit_test_vtab_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_vtab_LDADD = $(NX_LDADD)

check_PROGRAMS += tests/unit/test-vfs
TESTS += tests/unit/test-vfs
tests_unit_test_vfs_SOURCES = tests/unit/test-vfs.c tests/tap.h
tests_unit_test_vfs_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_vfs_LDADD = $(NX_LDADD)

check_PROGRAMS += tests/unit/test-vfs-direct
TESTS += tests/unit/test-vfs-direct
tests_unit_test_vfs_direct_SOURCES = tests/unit/test-vfs-direct.c tests/tap.h
tests_unit_test_vfs_direct_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_vfs_direct_LDADD = $(NX_LDADD)
