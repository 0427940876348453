#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/test.sh - the whole test suite, as CI runs it: install what is
# missing, build under AddressSanitizer + UndefinedBehaviorSanitizer, run
# `make check` (unit, golden, end-to-end server, capture and browser tests),
# then `make distcheck`.  Idempotent.  NX_NO_DISTCHECK=1 skips distcheck.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
scripts/install-deps.sh
b=_build-check
scripts/build.sh "$b" --enable-asan --enable-ubsan
rc=0
(cd "$b" && ASAN_OPTIONS=detect_leaks=1 make -j2 check) || rc=$?
log="$b/test-suite.log"
if [ $rc -ne 0 ]; then
	echo "==== failing tests ===="
	for f in $(grep -l -E '^(not ok|ERROR|FAIL)' $(find "$b/tests" -name '*.log') 2>/dev/null); do
		echo "--- $f"; tail -40 "$f"
	done
fi
pass=$(sed -n 's/^# PASS: *//p' "$log" | head -1)
fail=$(sed -n 's/^# FAIL: *//p' "$log" | head -1)
err=$(sed -n 's/^# ERROR: *//p' "$log" | head -1)
skip=$(sed -n 's/^# SKIP: *//p' "$log" | head -1)
if [ $rc -eq 0 ] && [ "${NX_NO_DISTCHECK:-0}" != 1 ]; then
	(cd "$b" && make -j2 distcheck >distcheck.log 2>&1) || { rc=$?; tail -60 "$b/distcheck.log"; }
	[ $rc -eq 0 ] && echo "distcheck: ok" || fail=$((${fail:-0} + 1))
fi
echo "checks: ${pass:-0} passed, $(( ${fail:-0} + ${err:-0} )) failed, ${skip:-0} skipped"
exit $rc
