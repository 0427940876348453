# server/: the HTTP server (`neuron-explorer serve`).
noinst_LIBRARIES += libserver.a
libserver_a_CPPFLAGS = $(AM_CPPFLAGS) -DNX_SRC_WEB='"$(abs_top_srcdir)/web"'
libserver_a_CFLAGS = $(AM_CFLAGS) $(MHD_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS) \
	$(CRYPTO_CFLAGS) $(ZLIB_CFLAGS)
libserver_a_SOURCES = server/srv-int.h server/srv-cmd.c server/srv-http.c \
	server/srv-upload.c server/srv-queue.c server/srv-pool.c server/srv-api.c server/srv-export.c \
	server/srv-trace.c server/srv-search.c server/srv-static.c server/srv-metrics.c server/srv-cache.c server/srv-gzip.c \
	server/srv-sums.h server/srv-sums.c

# End-to-end tests: a real server on 127.0.0.1 port 0 driven with curl.
SERVER_TESTS = tests/server/basic.sh tests/server/bad-input.sh tests/server/crash.sh \
	tests/server/shared.sh tests/server/concurrency.sh tests/server/migrate.sh \
	tests/server/disk-full.sh tests/server/export.sh tests/server/summary.sh tests/server/search.sh \
	tests/server/damaged.sh tests/server/memory.sh \
	tests/server/status-race.sh
TESTS += $(SERVER_TESTS)
EXTRA_DIST += $(SERVER_TESTS) tests/server/srv-lib.sh tests/server/gen-trace.py \
	tests/server/check.py
