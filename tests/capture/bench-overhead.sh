#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/capture/bench-overhead.sh - the capture agent's own cost on a
# workload's wall time (not part of `make check`; short runs only).
# usage: NX_BIN=./neuron-explorer tests/capture/bench-overhead.sh [RUNS] [STEPS]
# Prints a Markdown table of median wall times over RUNS runs.
set -u
NX=${NX_BIN:-./neuron-explorer}
SRC=${NX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
RUNS=${1:-5}
STEPS=${2:-20}
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
unset PYTHONPATH

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
wall() { # wall CMD...: median wall ms over RUNS runs
	i=0
	while [ $i -lt "$RUNS" ]; do
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1
		e=$(date +%s%N)
		echo $(( (e - s) / 1000000 ))
		i=$((i + 1))
	done | median
}
cap() { "$NX" capture -q -o "$T/run.ntff" "$@"; }
TRAIN="$SRC/examples/train.py --steps $STEPS"

true_plain=$(wall /bin/true)
true_cap=$(wall cap --set NX_LAYERS=none -- /bin/true)
py_plain=$(wall $PY $TRAIN)
py_none=$(wall cap --set NX_LAYERS=none -- $PY $TRAIN)
py_hook0=$(wall cap --set NX_LAYERS=framework --set NX_WAIT_STEPS=100000 -- $PY $TRAIN)
py_fw=$(wall cap --set NX_LAYERS=framework -- $PY $TRAIN)
py_fw_all=$(wall cap --set NX_LAYERS=framework --set NX_ACTIVE_STEPS=0 -- $PY $TRAIN)

echo "| run ($RUNS runs, median wall ms; examples/train.py --steps $STEPS) | ms | vs plain |"
echo "|---|---:|---:|"
echo "| /bin/true, plain | $true_plain | |"
echo "| /bin/true, capture NX_LAYERS=none (agent fixed cost) | $true_cap | +$((true_cap - true_plain)) |"
echo "| train.py, plain | $py_plain | |"
echo "| train.py, capture NX_LAYERS=none (agent only) | $py_none | +$((py_none - py_plain)) |"
echo "| train.py, hook loaded, window never reached | $py_hook0 | +$((py_hook0 - py_plain)) |"
echo "| train.py, framework layer, default window (1 warm-up + 3 active) | $py_fw | +$((py_fw - py_plain)) |"
echo "| train.py, framework layer, every step recorded | $py_fw_all | +$((py_fw_all - py_plain)) |"
