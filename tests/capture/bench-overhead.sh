#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/capture/bench-overhead.sh - the capture agent's own cost on a
# workload's wall time (not part of `make check`; short runs only).
# usage: NX_BIN=./neuron-explorer tests/capture/bench-overhead.sh [ROUNDS] [STEPS]
# The variants run interleaved, ROUNDS times each, so load drift on a shared
# machine hits them alike; prints a Markdown table of median wall time and
# median CPU time (user+sys of the whole process tree) per variant.
set -u
NX=${NX_BIN:-./neuron-explorer}
SRC=${NX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
ROUNDS=${1:-7}
STEPS=${2:-20}
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
unset PYTHONPATH
TRAIN="$SRC/examples/train.py"

# name|command (word-split on purpose)
cat >"$T/variants" <<V
true_plain|/bin/true
true_cap|$NX capture -q -o $T/run.ntff --set NX_LAYERS=none -- /bin/true
py_plain|$PY $TRAIN --steps $STEPS
py_none|$NX capture -q -o $T/run.ntff --set NX_LAYERS=none -- $PY $TRAIN --steps $STEPS
py_idle|$NX capture -q -o $T/run.ntff --set NX_LAYERS=framework --set NX_WAIT_STEPS=100000 -- $PY $TRAIN --steps $STEPS
py_fw|$NX capture -q -o $T/run.ntff --set NX_LAYERS=framework -- $PY $TRAIN --steps $STEPS
py_all|$NX capture -q -o $T/run.ntff --set NX_LAYERS=framework --set NX_ACTIVE_STEPS=0 -- $PY $TRAIN --steps $STEPS
V
r=0
while [ $r -lt "$ROUNDS" ]; do
	while IFS='|' read -r name cmd; do
		$PY - "$T/$name" $cmd <<'P'
import os, resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = (time.monotonic() - t) * 1000
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "a") as f:
    f.write("%d %d\n" % (wall, (ru.ru_utime + ru.ru_stime) * 1000))
P
	done <"$T/variants"
	r=$((r + 1))
done
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
W() { cut -d' ' -f1 "$T/$1" | med; }
C() { cut -d' ' -f2 "$T/$1" | med; }
row() { # row NAME LABEL BASE
	echo "| $2 | $(W "$1") | +$(( $(W "$1") - $(W "$3") )) | $(C "$1") | +$(( $(C "$1") - $(C "$3") )) |"
}
echo "| variant ($ROUNDS interleaved rounds, medians; train.py --steps $STEPS) | wall ms | wall vs plain | CPU ms | CPU vs plain |"
echo "|---|---:|---:|---:|---:|"
echo "| /bin/true, plain | $(W true_plain) | | $(C true_plain) | |"
row true_cap "/bin/true under capture, NX_LAYERS=none (agent fixed cost)" true_plain
echo "| train.py, plain | $(W py_plain) | | $(C py_plain) | |"
row py_none "train.py under capture, NX_LAYERS=none (agent only)" py_plain
row py_idle "train.py, torch hook loaded, window never reached" py_plain
row py_fw "train.py, framework layer, default window (1 warm-up + 3 active steps)" py_plain
row py_all "train.py, framework layer, every step recorded" py_plain
