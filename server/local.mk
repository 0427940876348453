# server/: the HTTP server.
noinst_LIBRARIES += libserver.a
libserver_a_CFLAGS = $(AM_CFLAGS) $(MHD_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS) $(CRYPTO_CFLAGS)
libserver_a_SOURCES = server/srv-cmd.c
