# capture/: the capture agent, unified env config and upload.
noinst_LIBRARIES += libcapture.a
libcapture_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CURL_CFLAGS)
libcapture_a_SOURCES = capture/cap-cmd.c
