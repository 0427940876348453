EXTRA_DIST += tests/lib.sh tests/tap.h tests/data
