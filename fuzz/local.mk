# fuzz/: libFuzzer targets under --enable-fuzzing; corpora replayed by make check.
include fuzz/json.mk
include fuzz/store.mk
