#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/deps-bench.sh - cost of the dependency analysis (deps/) on a
# SYNTHETIC engine trace from tests/deps-gen: ingest with and without the
# analysis (NX_DEPS_DISABLE=1), then chain and critical-path query times from
# the CLI and through a server.
# usage: bench/deps-bench.sh [BUILD_DIR | EVENTS]   (`make bench` passes the
# build directory; a number is the event count, run from a build directory)
# env: EVENTS (default 1000000), NX_BENCH_RUNS (ingests of each kind, default
# 3: the least and the median CPU and wall times count), BENCH_OUT (the page
# whose generated part is rewritten, default docs/benchmarks-deps.md; "-":
# print only).  The analysis runs on as many threads as there are CPUs (at
# most 8) and, for comparison, on one (NX_DEPS_THREADS=1).
set -eu
N=${EVENTS:-1000000}
B=${NX_BUILDDIR:-$(pwd)}
case "${1:-}" in
'') ;;
*[!0-9]*) B=$1 ;;
*) N=$1 ;;
esac
RUNS=${NX_BENCH_RUNS:-3}
NX=$B/neuron-explorer
GEN=$B/tests/deps-gen
top=$(cd "$(dirname "$0")/.." && pwd)
out=${BENCH_OUT:-$top/docs/benchmarks-deps.md}
W=$(mktemp -d "${TMPDIR:-/tmp}/nxdepsbench.XXXXXX")
SRV=""
trap '[ -n "$SRV" ] && kill "$SRV" 2>/dev/null; rm -rf "$W"' EXIT
[ -x "$GEN" ] || make -C "$B" tests/deps-gen >/dev/null

"$GEN" -n "$N" >"$W/trace.json"
size=$(wc -c <"$W/trace.json")

# cpu seconds (user + sys) and wall seconds of an ingest into DIR over RUNS
# runs: the least cpu, the least wall, the median cpu, the median wall
# (the least is robust on a shared machine, the median says how noisy),
# then the median minor page faults and peak RSS (MiB)
cpu() {
	dir=$1
	shift
	for _ in $(seq "$RUNS"); do
		rm -rf "$dir"
		/usr/bin/time -f "%U %S %e %R %M" -o "$W/time" "$@" --data "$dir" --json "$W/trace.json" \
			>"$W/out" 2>"$W/err" || return 1
		awk '{ printf "%.2f %.2f %d %d\n", $1 + $2, $3, $4, $5 }' "$W/time"
	done >"$W/runs"
	c=$(cut -d' ' -f1 "$W/runs" | sort -n)
	w=$(cut -d' ' -f2 "$W/runs" | sort -n)
	m=$(( (RUNS + 1) / 2 ))
	echo "$(echo "$c" | head -1) $(echo "$w" | head -1) $(echo "$c" | sed -n ${m}p)" \
	     "$(echo "$w" | sed -n ${m}p) $(cut -d' ' -f3 "$W/runs" | sort -n | sed -n ${m}p)" \
	     "$(( $(cut -d' ' -f4 "$W/runs" | sort -n | sed -n ${m}p) / 1024 ))"
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
base_cpu=$1 base_wall=$2 base_mcpu=$3 base_mwall=$4 base_flt=$5 base_rss=$6
set -- $(NX_DEPS_THREADS=1 cpu "$W/d1" "$NX" ingest)
one_cpu=$1 one_wall=$2 one_mcpu=$3 one_mwall=$4
set -- $(cpu "$W/d1" "$NX" ingest)
deps_cpu=$1 deps_wall=$2 deps_mcpu=$3 deps_mwall=$4 deps_flt=$5 deps_rss=$6
id=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['id'])" "$W/out")
edges=$(python3 -c "import json,sys; print(sum(json.load(open(sys.argv[1]))['flows'].values()))" "$W/out")
# the peer for how memory is asked for: glibc's malloc on 4 KiB pages and
# SQLite's own page buffers (NX_MALLOC_THP=0 NX_PAGE_POOL=0)
set -- $(NX_MALLOC_THP=0 NX_PAGE_POOL=0 NX_DEPS_DISABLE=1 cpu "$W/d2" "$NX" ingest)
pbase_cpu=$1 pbase_wall=$2 pbase_mcpu=$3 pbase_mwall=$4 pbase_flt=$5 pbase_rss=$6
set -- $(NX_MALLOC_THP=0 NX_PAGE_POOL=0 cpu "$W/d2" "$NX" ingest)
pdeps_cpu=$1 pdeps_wall=$2 pdeps_mcpu=$3 pdeps_mwall=$4 pdeps_flt=$5 pdeps_rss=$6
# the peer for where the edges are collected: new pages, not the args' memory
set -- $(NX_EDGES_IN_ARGS=0 cpu "$W/d2" "$NX" ingest)
ndeps_cpu=$1 ndeps_wall=$2 ndeps_mcpu=$3 ndeps_mwall=$4 ndeps_flt=$5 ndeps_rss=$6
# and for the interval maps: trees from the start, not grids of tiles
set -- $(NX_DEPS_GRID=0 cpu "$W/d2" "$NX" ingest)
tdeps_cpu=$1 tdeps_wall=$2 tdeps_mcpu=$3 tdeps_mwall=$4 tdeps_flt=$5 tdeps_rss=$6
rm -rf "$W/d0" "$W/d2"
pct() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "+%.0f%%", (a - b) * 100 / b }'
}
threads=$(nproc)
[ "$threads" -gt 8 ] && threads=8

mid=$((N / 2))
chain=$(ms "$NX" deps --data "$W/d1" "$id" "$mid" --depth 10 --budget 1000 --json)
chain_in=$(ms "$NX" deps --data "$W/d1" "$id" "$mid" --dir in --depth 50 --budget 1000 --json)
edges1=$(ms "$NX" deps --data "$W/d1" "$id" "$mid" --depth 1 --json)
start=$("$NX" sql "$W/d1/traces/$id.db" "SELECT ts FROM events WHERE id = $mid")
cp=$(ms "$NX" critical-path --data "$W/d1" "$id" --start "$start" --end $((start + 20000)) --json)
cp1=$(ms "$NX" critical-path --data "$W/d1" "$id" --start $((start - 1000000)) --end "$start" --json)
cpw=$(ms "$NX" critical-path --data "$W/d1" "$id" --json)
cpw10k=$(ms "$NX" critical-path --data "$W/d1" "$id" --budget 10000 --json)
cphops=$("$NX" critical-path --data "$W/d1" "$id" --max-hops 1 --json |
	python3 -c "import json,sys; j = json.load(sys.stdin); print(j['hops_total'], 'hops' + (', truncated' if j['truncated'] else ''))")
true_=$(ms true)

# Through a server, as the page and API users see them: curl's time_total over
# loopback for 7 events spread over the trace, the median; /healthz is the floor.
"$NX" serve --data "$W/d1" --listen 127.0.0.1:0 >"$W/srv.out" 2>"$W/srv.err" &
SRV=$!
url=""
for _ in $(seq 100); do
	url=$(sed -n 's/^neuron-explorer: serving \(http:[^ ]*\)$/\1/p' "$W/srv.out" | head -1)
	[ -n "$url" ] && break
	sleep 0.1
done
url=${url%/}
api=$url/api/traces/$id
# median ms of PATH (with @E@ the event and @T@ its start) over the 7 events
srv_ms() {
	for k in 1 2 3 4 5 6 7; do
		e=$(( N * k / 8 + 17 ))
		t=$("$NX" sql "$W/d1/traces/$id.db" "SELECT ts FROM events WHERE id = $e")
		p=$(echo "$1" | sed "s/@E@/$e/g; s/@T@/$t/g; s/@T0@/$((t - 1000000))/g")
		curl -s -o /dev/null -w '%{time_total}\n' "$p"
	done | sort -n | sed -n 4p | awk '{ printf "%.1f", $1 * 1000 }'
}
curl -s -o /dev/null "$api/deps/$mid"	# the connection's first open, not timed
s_def=$(srv_ms "$api/deps/@E@")
s_page=$(srv_ms "$api/deps/@E@?depth=3&budget=2000")
s_chain=$(srv_ms "$api/deps/@E@?depth=10&budget=1000")
s_ev=$(srv_ms "$api/events/@E@")
s_w1=$(srv_ms "$api/critical-path?start=@T0@&end=@T@")
s_b10k=$(srv_ms "$api/critical-path?event=@E@&budget=10000")
s_whole=$(srv_ms "$api/critical-path")
s_floor=$(srv_ms "$url/healthz")
kill "$SRV" 2>/dev/null
wait "$SRV" 2>/dev/null || true
SRV=""

{
echo "| events | file | edges | threads | ingest cpu without / with analysis (least; median) | overhead | wall without / with (least; median) | overhead |"
echo "|---|---|---|---|---|---|---|---|"
echo "| $N | $((size / 1048576)) MiB | $edges | 1 | ${base_cpu} s / ${one_cpu} s; ${base_mcpu} s / ${one_mcpu} s | $(pct "$one_cpu" "$base_cpu") | ${base_wall} s / ${one_wall} s; ${base_mwall} s / ${one_mwall} s | $(pct "$one_wall" "$base_wall") |"
echo "| $N | $((size / 1048576)) MiB | $edges | $threads | ${base_cpu} s / ${deps_cpu} s; ${base_mcpu} s / ${deps_mcpu} s | $(pct "$deps_cpu" "$base_cpu") | ${base_wall} s / ${deps_wall} s; ${base_mwall} s / ${deps_mwall} s | $(pct "$deps_wall" "$base_wall") |"
echo
echo "| ingest | memory | cpu s (least; median) | wall s (least; median) | minor faults (median) | peak RSS MiB (median) |"
echo "|---|---|---|---|---|---|"
echo "| analysis off | THP malloc + page pool (default) | ${base_cpu}; ${base_mcpu} | ${base_wall}; ${base_mwall} | ${base_flt} | ${base_rss} |"
echo "| analysis off | plain (\`NX_MALLOC_THP=0 NX_PAGE_POOL=0\`) | ${pbase_cpu}; ${pbase_mcpu} | ${pbase_wall}; ${pbase_mwall} | ${pbase_flt} | ${pbase_rss} |"
echo "| analysis on, $threads threads | THP malloc + page pool (default) | ${deps_cpu}; ${deps_mcpu} | ${deps_wall}; ${deps_mwall} | ${deps_flt} | ${deps_rss} |"
echo "| analysis on, $threads threads | plain (\`NX_MALLOC_THP=0 NX_PAGE_POOL=0\`) | ${pdeps_cpu}; ${pdeps_mcpu} | ${pdeps_wall}; ${pdeps_mwall} | ${pdeps_flt} | ${pdeps_rss} |"
echo "| analysis on, $threads threads, edges in new pages (\`NX_EDGES_IN_ARGS=0\`) | THP malloc + page pool (default) | ${ndeps_cpu}; ${ndeps_mcpu} | ${ndeps_wall}; ${ndeps_mwall} | ${ndeps_flt} | ${ndeps_rss} |"
echo "| analysis on, $threads threads, interval maps as trees (\`NX_DEPS_GRID=0\`) | THP malloc + page pool (default) | ${tdeps_cpu}; ${tdeps_mcpu} | ${tdeps_wall}; ${tdeps_mwall} | ${tdeps_flt} | ${tdeps_rss} |"
echo
echo "| query (CLI, best of 5, includes process start and db open) | ms |"
echo "|---|---|"
echo "| deps, depth 1 (edges of one event) | $edges1 |"
echo "| deps chain, both ways, depth 10, budget 1000 | $chain |"
echo "| deps chain, in, depth 50, budget 1000 | $chain_in |"
echo "| critical path, 20 us window | $cp |"
echo "| critical path, the 1 ms window before that | $cp1 |"
echo "| critical path, whole trace, the latest 10000 hops listed ($cphops walked) | $cpw |"
echo "| critical path, whole trace, the last 10000 hops walked (--budget 10000) | $cpw10k |"
echo "| (process start alone: \`true\`) | $true_ |"
echo
echo "| query (server on loopback, curl, median of 7 events) | ms |"
echo "|---|---|"
echo "| chain, the API's default (both ways, depth 8, budget 10000) | $s_def |"
echo "| chain, the page's (depth 3, budget 2000) | $s_page |"
echo "| chain, depth 10, budget 1000 | $s_chain |"
echo "| event detail with its edge lists | $s_ev |"
echo "| critical path, the 1 ms window before the event | $s_w1 |"
echo "| critical path ending at the event, 10000 hops (\`budget=10000\`) | $s_b10k |"
echo "| critical path, whole trace ($cphops walked, the latest 10000 listed) | $s_whole |"
echo "| (floor: \`GET /healthz\`) | $s_floor |"
} >"$W/tables"
cat "$W/tables"
[ "$out" = "-" ] && exit 0
# the generated part sits between two markers; the hand-written rounds stay
grep -q '^<!-- bench:begin -->$' "$out" ||
	printf '\n## Last run\n\n<!-- bench:begin -->\n<!-- bench:end -->\n' >>"$out"
{
	sed -n '1,/^<!-- bench:begin -->$/p' "$out"
	echo
	echo "Last \`make bench\` run: $(date -u +%Y-%m-%d), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)," \
	     "$N events (\`EVENTS=$N NX_BENCH_RUNS=$RUNS bench/deps-bench.sh\`)."
	echo
	cat "$W/tables"
	echo
	sed -n '/^<!-- bench:end -->$/,$p' "$out"
} >"$W/page"
cp "$W/page" "$out"
echo "bench: wrote $out"
