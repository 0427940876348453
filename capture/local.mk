# SPDX-License-Identifier: MIT
# capture/: the capture agent, unified env config and upload.
noinst_LIBRARIES += libcapture.a
libcapture_a_CPPFLAGS = $(AM_CPPFLAGS) -DCAP_SRCDIR='"$(abs_top_srcdir)"' \
	-DCAP_BUILDDIR='"$(abs_top_builddir)"'
libcapture_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CURL_CFLAGS)
libcapture_a_SOURCES = capture/cap-int.h capture/cap-config.c capture/cap-plan.c \
	capture/cap-env.c capture/cap-cmd.c capture/cap-upload.c

# Installed data: the config, the profiles, the translation table, the hook.
capenvdir = $(pkgdatadir)/env
dist_capenv_DATA = env/defaults.env env/layers.tsv env/framework.env env/kernel.env \
	env/full.env env/neuron-model.env
cappydir = $(pkgdatadir)/python
dist_cappy_DATA = capture/python/sitecustomize.py

check_PROGRAMS += tests/unit/test-capture-config
TESTS += tests/unit/test-capture-config
tests_unit_test_capture_config_SOURCES = tests/unit/test-capture-config.c tests/tap.h
tests_unit_test_capture_config_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_capture_config_LDADD = $(NX_LDADD)

TESTS += tests/capture/env.sh tests/capture/capture.sh tests/capture/upload.sh \
	tests/capture/cupti.sh tests/capture/neuron.sh
EXTRA_DIST += tests/capture examples/train.py docs/capture.md docs/benchmarks-capture.md


# The CUPTI injection library, when configure found the CUDA toolkit.
if HAVE_CUPTI
pkglib_LTLIBRARIES += capture/cupti/libnx-cupti.la
capture_cupti_libnx_cupti_la_SOURCES = capture/cupti/nx-cupti.c
capture_cupti_libnx_cupti_la_CPPFLAGS = -I$(CUDA_DIR)/include
capture_cupti_libnx_cupti_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
capture_cupti_libnx_cupti_la_LDFLAGS = -module -avoid-version -shared -L$(CUPTI_LIBDIR) \
	-Wl,-rpath,$(CUPTI_LIBDIR)
capture_cupti_libnx_cupti_la_LIBADD = -lcupti -lpthread

check_PROGRAMS += tests/unit/test-capture-cupti
TESTS += tests/unit/test-capture-cupti
tests_unit_test_capture_cupti_SOURCES = tests/unit/test-capture-cupti.c tests/tap.h
tests_unit_test_capture_cupti_CPPFLAGS = $(AM_CPPFLAGS) -I$(CUDA_DIR)/include
tests_unit_test_capture_cupti_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_capture_cupti_LDFLAGS = -L$(CUPTI_LIBDIR) -Wl,-rpath,$(CUPTI_LIBDIR)
tests_unit_test_capture_cupti_LDADD = $(NX_LDADD) -lcupti
endif
EXTRA_DIST += capture/cupti/nx-cupti.c tests/cuda tests/unit/test-capture-cupti.c
