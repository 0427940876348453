#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/deps-bench.sh - cost of the dependency analysis (deps/) on a
# SYNTHETIC engine trace from tests/deps-gen: ingest with and without the
# analysis (NX_DEPS_DISABLE=1), then chain and critical-path query times.
# Run from a build directory: sh bench/deps-bench.sh [EVENTS] (default 1000000).
# Each ingest runs NX_BENCH_RUNS times (default 3) and the least CPU counts.
# Prints a Markdown table for docs/benchmarks-deps.md.
set -eu
N=${1:-1000000}
RUNS=${NX_BENCH_RUNS:-3}
B=${NX_BUILDDIR:-$(pwd)}
NX=$B/neuron-explorer
GEN=$B/tests/deps-gen
W=$(mktemp -d "${TMPDIR:-/tmp}/nxdepsbench.XXXXXX")
trap 'rm -rf "$W"' EXIT

"$GEN" -n "$N" >"$W/trace.json"
size=$(wc -c <"$W/trace.json")

# cpu SECONDS and wall seconds of an ingest into DIR (user + sys), the least
# of RUNS runs: robust on a shared machine
cpu() {
	dir=$1
	shift
	for _ in $(seq "$RUNS"); do
		rm -rf "$dir"
		/usr/bin/time -f "%U %S %e" -o "$W/time" "$@" --data "$dir" --json "$W/trace.json" \
			>"$W/out" 2>"$W/err" || return 1
		awk '{ printf "%.2f %.2f\n", $1 + $2, $3 }' "$W/time"
	done | sort -n | head -1
}
# ms of wall time of one command, best of 5
ms() {
	best=""
	for _ in 1 2 3 4 5; do
		t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N)
		t=$(( (t1 - t0) / 1000000 ))
		if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
	done
	echo "$best"
}

set -- $(NX_DEPS_DISABLE=1 cpu "$W/d0" "$NX" ingest)
base_cpu=$1 base_wall=$2
set -- $(cpu "$W/d1" "$NX" ingest)
deps_cpu=$1 deps_wall=$2
id=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['id'])" "$W/out")
edges=$(python3 -c "import json,sys; print(sum(json.load(open(sys.argv[1]))['flows'].values()))" "$W/out")
over=$(awk -v a="$deps_cpu" -v b="$base_cpu" 'BEGIN { printf "%.0f", (a - b) * 100 / b }')

mid=$((N / 2))
chain=$(ms "$NX" deps --data "$W/d1" "$id" "$mid" --depth 10 --budget 1000 --json)
chain_in=$(ms "$NX" deps --data "$W/d1" "$id" "$mid" --dir in --depth 50 --budget 1000 --json)
edges1=$(ms "$NX" deps --data "$W/d1" "$id" "$mid" --depth 1 --json)
start=$("$NX" sql "$W/d1/traces/$id.db" "SELECT ts FROM events WHERE id = $mid")
cp=$(ms "$NX" critical-path --data "$W/d1" "$id" --start "$start" --end $((start + 20000)) --json)
cpw=$(ms "$NX" critical-path --data "$W/d1" "$id" --json)
true_=$(ms true)

echo "| events | file | edges | ingest cpu without / with analysis | overhead | wall without / with |"
echo "|---|---|---|---|---|---|"
echo "| $N | $((size / 1048576)) MiB | $edges | ${base_cpu} s / ${deps_cpu} s | ${over}% | ${base_wall} s / ${deps_wall} s |"
echo
echo "| query (CLI, best of 5, includes process start and db open) | ms |"
echo "|---|---|"
echo "| deps, depth 1 (edges of one event) | $edges1 |"
echo "| deps chain, both ways, depth 10, budget 1000 | $chain |"
echo "| deps chain, in, depth 50, budget 1000 | $chain_in |"
echo "| critical path, 20 us window | $cp |"
echo "| critical path, whole trace (10000-hop budget) | $cpw |"
echo "| (process start alone: \`true\`) | $true_ |"
