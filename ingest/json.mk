# Chrome/Kineto JSON reader (owned by the JSON ingest work).
libingest_a_SOURCES += ingest/ing-json.c
