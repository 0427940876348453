#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/server-bench.sh - latency of the trace server under wrk: generate a
# trace of EVENTS (default 1M) events, upload it (throughput to the 202),
# wait for the ingest, then run wrk for DURATION seconds each on the
# full-span timeline, a deep zoom, one event's detail and /healthz (the
# floor), and write p50/p99 into docs/benchmarks-server.md.
# usage: bench/server-bench.sh [BUILD_DIR]   env: EVENTS DURATION CONNS THREADS OUT
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC}
NX=$BUILD/neuron-explorer
EVENTS=${EVENTS:-1000000}
DURATION=${DURATION:-10}
CONNS=${CONNS:-8}
THREADS=${THREADS:-2}
OUT=${OUT:-$SRC/docs/benchmarks-server.md}
PY=/usr/bin/python3
command -v wrk >/dev/null || { echo "server-bench: wrk not installed (apt-get install wrk)"; exit 77; }
[ -x "$NX" ] || { echo "server-bench: build first ($NX missing)"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/nxbench.XXXXXX")
PID=""
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; rm -rf "$W"' EXIT

echo "server-bench: generating $EVENTS events"
$PY "$SRC/tests/server/gen-trace.py" "$EVENTS" "$W/trace.json" 16
SIZE=$(wc -c <"$W/trace.json")
"$NX" serve --listen 127.0.0.1:0 --data "$W/data" --workers 1 --max-upload 8G >"$W/out" 2>"$W/err" &
PID=$!
i=0
while [ ! -s "$W/out" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
URL=$(sed -n 's/^neuron-explorer: serving \(http:[^ ]*\)\/$/\1/p' "$W/out")

# resident memory of the server, in MB: rss KEY (VmRSS, VmHWM)
rss() { awk -v k="$1:" '$1 == k { printf "%.0f", $2 / 1024 }' "/proc/$PID/status"; }
RSS0=$(rss VmRSS)
t0=$(date +%s.%N)
curl -s -F "trace=@$W/trace.json" "$URL/upload" -o "$W/up.json"
t1=$(date +%s.%N)
ID=$($PY -c "import json; print(json.load(open('$W/up.json'))['id'])")
UPLOAD_MBS=$($PY -c "print('%.0f' % ($SIZE / 1e6 / ($t1 - $t0)))")
while :; do
	curl -s "$URL/api/traces/$ID" -o "$W/t.json"
	st=$($PY -c "import json; print(json.load(open('$W/t.json'))['status'])")
	[ "$st" = ready ] && break
	[ "$st" = failed ] && { cat "$W/t.json"; exit 1; }
	sleep 0.5
done
t2=$(date +%s.%N)
INGEST_S=$($PY -c "print('%.1f' % ($t2 - $t1))")
read -r NEV START END <<EOF2
$($PY -c "import json; j=json.load(open('$W/t.json')); print(j['slices']+j['instants']+j['counters'], j['start_ns'], j['end_ns'])")
EOF2
sleep 1
RSS1=$(rss VmRSS)
HWM=$(rss VmHWM)
MID=$(( (START + END) / 2 ))
curl -s "$URL/api/traces/$ID/search?q=matmul&limit=1&offset=1000" -o "$W/s.json"
EID=$($PY -c "import json; print(json.load(open('$W/s.json'))['matches'][0]['id'])")

# random windows of width $1 ns (a user panning: every request misses the cache)
pan_lua() { # WIDTH PX
	cat >"$W/pan.lua" <<LUA
math.randomseed(os.time())
request = function()
  local s = $START + math.random(0, $((END - START - $1)))
  return wrk.format("GET", string.format("/api/traces/$ID/timeline?start=%d&end=%d&px=$2", s, s + $1))
end
LUA
	echo "-s $W/pan.lua"
}
ev_lua() {
	cat >"$W/ev.lua" <<LUA
math.randomseed(os.time())
request = function()
  return wrk.format("GET", string.format("/api/traces/$ID/events/%d", math.random(1, $NEV)))
end
LUA
	echo "-s $W/ev.lua"
}
run() { # NAME PATH [WRK ARGS [CONNECTIONS]]
	c=${4:-$CONNS}
	t=$THREADS; [ "$t" -gt "$c" ] && t=$c
	wrk -t"$t" -c"$c" -d"${DURATION}s" --latency ${3:-} "$URL$2" >"$W/wrk.txt" 2>&1
	p50=$(awk '$1=="50%"{print $2}' "$W/wrk.txt")
	p99=$(awk '$1=="99%"{print $2}' "$W/wrk.txt")
	rps=$(awk '/^Requests\/sec/{print $2}' "$W/wrk.txt")
	non2xx=$(awk '/Non-2xx/{print $NF}' "$W/wrk.txt")
	bytes=$(curl -s -o /dev/null -w '%{size_download}' "$URL$2")
	[ -n "${3:-}" ] && bytes="varies (random requests)"
	echo "| $1 | $c | \`$2\` | $p50 | $p99 | $rps | $bytes | ${non2xx:-0} |" >>"$W/rows"
	echo "server-bench: $1: p50 $p50 p99 $p99 ($rps req/s)"
}
: >"$W/rows"
cat >"$W/fs.lua" <<LUA
math.randomseed(os.time())
request = function()
  return wrk.format("GET", string.format("/api/traces/$ID/timeline?start=$START&end=$END&px=%d",
    math.random(1000, 2000)))
end
LUA
t3=$(date +%s.%N)
curl -s -o /dev/null "$URL/api/traces/$ID/timeline?start=$START&end=$END&px=1600"
t4=$(date +%s.%N)
COLD_MS=$($PY -c "print('%.0f' % (($t4 - $t3) * 1000))")
run "healthz (floor)" "/healthz"
run "timeline, full span (cached answer)" "/api/traces/$ID/timeline?start=$START&end=$END&px=1600"
run "timeline, full span, computed (random px)" "/api/traces/$ID/timeline?start=$START&end=$END&px=1600" \
	"-s $W/fs.lua"
run "timeline, full span, computed, one client" "/api/traces/$ID/timeline?start=$START&end=$END&px=1600" \
	"-s $W/fs.lua" 1
run "timeline, deep zoom, random 20 us windows" "/api/traces/$ID/timeline?px=1600" "$(pan_lua 20000 1600)"
run "timeline, 1/64 span, random windows" "/api/traces/$ID/timeline?px=1600" \
	"$(pan_lua $(((END - START) / 64)) 1600)"
cat >"$W/search.lua" <<LUA
math.randomseed(os.time())
request = function()
  return wrk.format("GET", string.format("/api/traces/$ID/search?q=matmul&limit=100&offset=%d",
    math.random(0, 1000)))
end
LUA
run "search, 100-match pages at random offsets < 1000" "/api/traces/$ID/search?q=matmul&limit=100" "-s $W/search.lua"
cat >"$W/sum.lua" <<LUA
math.randomseed(os.time())
request = function()
  local s = $START + math.random(0, $((END - START - (END - START) / 64)))
  return wrk.format("GET", string.format("/api/traces/$ID/summary?start=%d&end=%d", s,
    s + $(((END - START) / 64))))
end
LUA
run "summary, 1/64 span, random windows" "/api/traces/$ID/summary" "-s $W/sum.lua"
run "event detail, random events" "/api/traces/$ID/events/$EID" "$(ev_lua)"
run "event detail, random events, one client" "/api/traces/$ID/events/$EID" "$(ev_lua)" 1
kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""

mkdir -p "$(dirname "$OUT")"
# the hand-written notes after the generated part survive a rerun
notes=$(sed -n '/^### Reading these numbers/,$p' "$OUT" 2>/dev/null || true)
{
	echo "## Trace server (bench/server-bench.sh)"
	echo
	echo "$(date -u +%Y-%m-%d), $(nproc) cores shared with other work (load average"
	echo "$(cut -d' ' -f1 /proc/loadavg) at the end), $(uname -m)."
	echo "Synthetic trace: $NEV events on 16 threads + a counter (tests/server/gen-trace.py),"
	echo "$((SIZE / 1000000)) MB of JSON. Upload (curl -F, to the 202): ${UPLOAD_MBS} MB/s."
	echo "Ingest after the 202: ${INGEST_S} s (1 worker). First full-span timeline"
	echo "(computed, 17 units, px 1600): ${COLD_MS} ms. Server resident memory: ${RSS0} MB"
	echo "before the upload, ${HWM} MB at most, ${RSS1} MB idle after the ingest."
	echo "wrk -t$THREADS -c$CONNS -d${DURATION}s per row, loopback, keep-alive."
	echo
	echo "| query | conns | path | p50 | p99 | req/s | answer bytes | non-2xx |"
	echo "|---|---|---|---|---|---|---|---|"
	cat "$W/rows"
	echo
	echo "Targets: full-span timeline p99 < 50 ms at 1M events, event detail < 5 ms."
	echo "\"cached answer\" repeats one URL: after the first request it is served from"
	echo "the answer cache (answers of a ready trace never change). The \"computed\" and"
	echo "\"random\" rows vary the request so that every one is computed: they are what"
	echo "a user panning and zooming sees."
} >"$OUT"
[ -n "$notes" ] && printf '\n%s\n' "$notes" >>"$OUT"
echo "server-bench: wrote $OUT"
