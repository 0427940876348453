#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/capture/cupti.sh - the CUPTI injection library as built here: it
# exports InitializeInjection, capture picks it for the cuda layer, and a
# CUDA program with no usable GPU still runs unharmed under capture.  The
# device check proper is tests/cuda/run-gpu.sh (needs a GPU).
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
LIB="$NX_BUILDDIR/capture/cupti/.libs/libnx-cupti.so"
[ -e "$LIB" ] || skip_all "built without CUPTI (configure did not find CUDA)"
command -v nm >/dev/null || skip_all "no nm"

nm -D --defined-only "$LIB" | grep -q ' T InitializeInjection$'
ok $? "exports InitializeInjection"
is "$(nm -D --defined-only "$LIB" | grep -c ' T ')" "1" "exports nothing else"
"$NX" env --json --set NX_KERNEL_BACKEND=cupti --set NX_LAYERS=kernel >"$T/e.json" 2>"$T/e.err"
is "$(jget "$T/e.json" "j['env'].get('CUDA_INJECTION64_PATH')")" "$LIB" \
	"cuda layer gets the built library"
is "$(jget "$T/e.json" "j['env'].get('NX_CUPTI_OUTPUT', '').endswith('/kernel/cupti.json')")" "True" \
	"cuda layer output path"
# Without a GPU the driver never loads the library; the workload is unharmed.
"$NX" capture -q --set NX_KERNEL_BACKEND=cupti --set NX_LAYERS=kernel \
	--set NX_CAPTURE_DIR="$T/c" -o "$T/run.ntff" -- /bin/sh -c 'echo "$CUDA_INJECTION64_PATH"' \
	>"$T/out" 2>"$T/err"
is "$?|$(cat "$T/out")" "0|$LIB" "workload sees CUDA_INJECTION64_PATH"
is "$(jget "$T/c/manifest.json" "j['kernel_backend']")" "cupti" "manifest: kernel backend"
grep -q "CUPTI collector wrote nothing" "$T/err"
ok $? "no CUDA activity is a warning, not a failure"
# The collector's output (records built in memory by the unit test) ingests:
# GPU rows, API rows and the flows.
if [ -x "$NX_BUILDDIR/tests/unit/test-capture-cupti" ]; then
	mkdir -p "$T/k"
	"$NX_BUILDDIR/tests/unit/test-capture-cupti" "$T/k/cupti.json" >/dev/null
	ok $? "collector output written"
	"$NX" ingest --data "$T/data" --json "$T/k/cupti.json" >"$T/ing.json" 2>"$T/ing.err"
	ok $? "collector output ingests"
	is "$(jget "$T/ing.json" "j['slices'], j['flows']['flow'] + j['flows']['order'], j['unmatched']")" \
		"8 4 0" "8 slices (4 API, 3 GPU ops, 1 sync), 3 launch flows + 1 order flow, all bound"
	is "$(jget "$T/ing.json" "j['devices'] >= 2")" "True" "GPU and host devices"
else
	skip "no test-capture-cupti"
fi
done_testing
