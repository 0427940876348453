# Perfetto protobuf reader and the .ntff container (owned by the Perfetto/ntff work).
libingest_a_SOURCES += ingest/ing-perfetto.c ingest/ing-ntff.c
