#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cuda/run-gpu.sh - the prepared check for a GPU machine: build the
# project with CUPTI, build tests/cuda/multistream.cu, capture it with the
# CUPTI collector, ingest run.ntff and check rows and edges.  Run from the
# repository root; writes its evidence under ${OUT:-/tmp/nx-gpu}.
# Exit 0 when every check passed, 1 otherwise, 77 without a GPU or nvcc.
set -u
OUT=${OUT:-/tmp/nx-gpu}
mkdir -p "$OUT"
CUDA=${CUDA_DIR:-/usr/local/cuda}
NVCC=$CUDA/bin/nvcc
[ -x "$NVCC" ] || { echo "SKIP: no $NVCC"; exit 77; }
[ -e /dev/nvidia0 ] || [ -e /proc/driver/nvidia/version ] || { echo "SKIP: no NVIDIA GPU"; exit 77; }
fail=0
check() { if eval "$2"; then echo "ok - $1"; else echo "not ok - $1"; fail=1; fi; }

if [ ! -x ./neuron-explorer ] || [ ! -e capture/cupti/.libs/libnx-cupti.so ]; then
	{ [ -x configure ] || autoreconf -fi; } >"$OUT/build.log" 2>&1
	{ ./configure --with-cuda="$CUDA" && make -j"$(nproc)" neuron-explorer \
		capture/cupti/libnx-cupti.la; } >>"$OUT/build.log" 2>&1 ||
		{ tail -30 "$OUT/build.log"; exit 1; }
fi
"$NVCC" -O2 -o "$OUT/multistream" tests/cuda/multistream.cu >"$OUT/nvcc.log" 2>&1 ||
	{ cat "$OUT/nvcc.log"; exit 1; }
nvidia-smi -L >"$OUT/gpu.txt" 2>&1

./neuron-explorer env --json --set NX_KERNEL_BACKEND=cupti --set NX_LAYERS=kernel \
	>"$OUT/env.json" 2>"$OUT/env.err"
start=$(date +%s%N)
"$OUT/multistream" >"$OUT/plain.out" 2>&1
plain=$(( $(date +%s%N) - start ))
start=$(date +%s%N)
./neuron-explorer capture --set NX_KERNEL_BACKEND=cupti --set NX_LAYERS=kernel \
	--set NX_CAPTURE_DIR="$OUT/cap" -o "$OUT/run.ntff" -- "$OUT/multistream" \
	>"$OUT/capture.out" 2>"$OUT/capture.err"
rc=$?
captured=$(( $(date +%s%N) - start ))
echo "wall ns: plain $plain captured $captured" | tee "$OUT/overhead.txt"
py() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }
S="$OUT/cap/kernel/cupti-stats.json"
J="$OUT/cap/kernel/cupti.json"
cat "$S" 2>/dev/null
ops=$(py "$S" "j['device_ops']"); ops=${ops:-0}
launches=$(py "$S" "j['launch_flows']"); launches=${launches:-0}
orders=$(py "$S" "j['order_edges']"); orders=${orders:-0}
dropped=$(py "$S" "j['dropped']"); dropped=${dropped:--1}
kernels=$(py "$J" "' '.join(sorted({e['name'] for e in j['traceEvents'] if e.get('cat') == 'kernel'}))")
rows=$(py "$J" "len({e['tid'] for e in j['traceEvents'] if e.get('cat') == 'kernel'})"); rows=${rows:-0}
check "capture exit status 0" "[ $rc -eq 0 ]"
check "workload output" "grep -q 'h\\[0\\]' '$OUT/capture.out'"
check "cupti.json written" "[ -s '$J' ]"
check "device operations recorded ($ops >= 15: 6 kernels, 6 memcpy, 3 memset)" "[ $ops -ge 15 ]"
check "launch flows ($launches >= 6)" "[ $launches -ge 6 ]"
check "order edges for the 3 event waits ($orders)" "[ $orders -ge 3 ]"
check "no dropped records ($dropped)" "[ $dropped -eq 0 ]"
check "kernel names ($kernels)" "echo '$kernels' | grep -q scale"
check "two device rows, streams or channels ($rows)" "[ $rows -ge 2 ]"
./neuron-explorer ingest --data "$OUT/data" --json "$OUT/run.ntff" >"$OUT/ingest.json" 2>&1
irc=$?
cat "$OUT/ingest.json"
flows=$(py "$OUT/ingest.json" "j['flows']['flow']"); flows=${flows:-0}
orderdb=$(py "$OUT/ingest.json" "j['flows']['order']"); orderdb=${orderdb:-0}
check "ingest run.ntff" "[ $irc -eq 0 ]"
check "flow edges in the store ($flows)" "[ $flows -ge 6 ]"
check "order edges in the store ($orderdb; needs the JSON reader to map cat nx.order)" \
	"[ $orderdb -ge 3 ]"
exit $fail
