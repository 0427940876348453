# ingest/: the trace readers.  Each reader family has its own .mk.
noinst_LIBRARIES += libingest.a
libingest_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS) $(PROTOBUFC_CFLAGS) $(ZLIB_CFLAGS)
libingest_a_SOURCES = ingest/ingest.h ingest/ing-file.c
include ingest/json.mk
include ingest/perfetto.mk
