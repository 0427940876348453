#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/deps/progress.sh - an ingest's phases (reading, sorting,
# dependencies, edges, committing): `ingest --progress` off a terminal (a
# line per phase), on one (a line rewritten in place, through script(1)),
# none by default off a terminal; phases with nothing to do left out;
# `convert`'s (the same, then exporting); `upload --wait` following the
# server's phases until ready (or failed: exit 1); a DELETE and a SIGTERM that stop
# an ingest in flight (the trace gone, or resumed at the next start); and
# the server's live "progress" and "phase" while a synthetic engine trace
# (tests/deps-gen) ingests, polled until it is ready.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/server/srv-lib.sh"
GEN=${NX_BUILDDIR:-$(pwd)}/tests/deps-gen
[ -x "$GEN" ] || skip_all "no tests/deps-gen in the build directory"

"$GEN" -n 3000 -s 3 >"$T/small.json"
ok $? "deps-gen writes a 3000-event trace"

# phases FILE: the phase of each progress line, space-separated
phases() { sed -n 's/^.*: \([a-z]*\) ([0-9]*%)$/\1/p' "$1" | tr '\n' ' '; }
# percents FILE: the percentages, one a line
percents() { sed -n 's/^.*: [a-z]* (\([0-9]*\)%)$/\1/p' "$1"; }
# nondecreasing FILE [COLUMN]: the numbers of COLUMN (1) never go down
nondecreasing() {
	awk -v c="${2:-1}" 'NR > 1 && $c < last { bad = 1 } { last = $c } END { exit bad }' "$1"
}

"$NX" ingest --data "$T/d1" --progress "$T/small.json" >"$T/o1" 2>"$T/e1"
ok $? "ingest --progress succeeds"
is "$(phases "$T/e1")" "reading sorting dependencies edges committing " \
	"a line per phase, in order, for a trace with access sets"
is "$(grep -c '' "$T/e1")" 5 "nothing else on stderr"
percents "$T/e1" >"$T/p1"
check "the percentages never go down" nondecreasing "$T/p1"
is "$(sed -n 2p "$T/p1")" 50 "the finish starts half way"
is "$(grep -c "$T/small.json: 3000 slices" "$T/o1")" 1 "stdout has the result line alone"

"$NX" ingest --data "$T/d2" "$T/small.json" >"$T/o2" 2>"$T/e2"
ok $? "ingest without --progress succeeds"
is "$(wc -c <"$T/e2" | tr -d ' ')" 0 "no progress off a terminal by default"
"$NX" ingest --data "$T/d3" --no-progress "$T/small.json" >/dev/null 2>"$T/e3"
is "$(wc -c <"$T/e3" | tr -d ' ')" 0 "--no-progress: nothing"

NX_DEPS_DISABLE=1 "$NX" ingest --data "$T/d4" --progress "$T/small.json" >/dev/null 2>"$T/e4"
is "$(phases "$T/e4")" "reading sorting committing " \
	"analysis off: no dependencies, and no edges without them"
"$NX" ingest --data "$T/d4" --progress "$NX_SRCDIR/tests/data/json/small-object.json" \
	>/dev/null 2>"$T/e5"
is "$(phases "$T/e5")" "reading sorting edges committing " \
	"explicit flows without access sets: edges, no dependencies"

# convert loads its input the same way, then exports
"$NX" convert --progress "$T/small.json" "$T/c1.pftrace" 2>"$T/e7"
ok $? "convert --progress succeeds"
is "$(phases "$T/e7")" "reading sorting dependencies edges committing exporting " \
	"convert: the ingest's phases, then exporting"
"$NX" convert "$T/small.json" "$T/c2.pftrace" 2>"$T/e8"
is "$(wc -c <"$T/e8" | tr -d ' ')" 0 "convert: no progress off a terminal by default"
check "convert writes the same bytes with and without progress" cmp -s "$T/c1.pftrace" "$T/c2.pftrace"
"$NX" convert --progress "$T/small.json" "$T/c3.ntff" 2>"$T/e9"
is "$(wc -c <"$T/e9" | tr -d ' ')" 0 "convert to .ntff copies: nothing to show"

# on a terminal: one line, rewritten with \r, erased before the result
if command -v script >/dev/null 2>&1; then
	script -qec "'$NX' ingest --data '$T/d6' '$T/small.json'" /dev/null >"$T/tty" 2>&1
	ok $? "ingest on a terminal succeeds"
	check "the terminal line shows the phases" grep -q 'committing' "$T/tty"
	check "the line is rewritten in place" grep -q "$(printf '\r')$T/small.json: " "$T/tty"
	check "and erased before the result" \
		grep -q "$(printf '\033')\[K[0-9a-f]\{16\}  json  $T/small.json" "$T/tty"
else
	skip "no script(1): no terminal check"
	skip "no script(1)"
	skip "no script(1)"
	skip "no script(1)"
fi

# the server: poll a 300000-event ingest until it is ready
"$GEN" -n 300000 -s 11 >"$T/big.json"
ok $? "deps-gen writes a 300000-event trace"
srv_start "$T/srv"
ok $? "server starts"
# upload it raw, then one line a poll: status progress phase (until ready
# or failed, 120 s at most), from one process so that no poll waits for a
# process to start
"$PY" - "$URL" "$T/big.json" >"$T/polls" 2>"$T/polls.err" <<'EOF'
import json, sys, time, urllib.request
url, path = sys.argv[1], sys.argv[2]
with open(path, "rb") as f:
    req = urllib.request.Request(url + "/upload?name=big", data=f.read(), method="POST")
with urllib.request.urlopen(req) as r:
    if r.status != 202:
        sys.exit("upload answered %d" % r.status)
    tid = json.load(r)["id"]
end = time.time() + 120
while time.time() < end:
    with urllib.request.urlopen(url + "/api/traces/" + tid) as r:
        o = json.load(r)
    print(o["status"], o["progress"], o.get("phase", "absent"))
    if o["status"] in ("ready", "failed"):
        break
    time.sleep(0.005)
EOF
ok $? "uploaded (202) and polled the trace until it ended"
is "$(tail -1 "$T/polls")" "ready 1.0 None" "ready: progress 1 and no phase"
check "progress never goes down" nondecreasing "$T/polls" 2
# the phases seen while ingesting, each once and in order
seen=$(awk '$1 == "ingesting" && $3 != last { printf "%s ", $3; last = $3 }' "$T/polls")
echo "# $(grep -c '' "$T/polls") polls; phases seen: $seen"
check "every phase seen is a known one, in order" "$PY" -c "
import sys
order = ['reading', 'sorting', 'dependencies', 'edges', 'committing']
seen = sys.argv[1].split()
sys.exit(not seen or any(p not in order for p in seen) or
         [order.index(p) for p in seen] != sorted(order.index(p) for p in seen) or
         len(set(seen)) != len(seen))" "$seen"
check "more than one phase seen while it ingested" test "$(echo $seen | wc -w)" -ge 2
is "$(awk '$1 != "ingesting" && $3 != "None"' "$T/polls" | grep -c '')" 0 \
	"a phase only while ingesting"

# upload --wait: the server's phases on stderr until ready; a failed ingest exits 1
"$NX" upload "$T/big.json" "$URL" --name waited --wait >"$T/w.out" 2>"$T/w.err"
ok $? "upload --wait exits 0 once the trace is ready"
is "$(grep -c '' "$T/w.out")" 1 "stdout: the trace id alone"
check "stderr follows its phases" grep -q "^$T/big.json: [a-z]* ([0-9]*%)\$" "$T/w.err"
check "and says it is ready, with its counts" grep -q "ready: 300000 slices, 6 units" "$T/w.err"
is "$(req GET "/api/traces/$(cat "$T/w.out")")" 200 "the id printed is the trace's"
is "$(jget "$T/body" 'j["status"], j["name"]')" "ready waited" "ready under its name"
"$NX" upload "$NX_SRCDIR/tests/data/json/truncated.json" "$URL" --wait >/dev/null 2>"$T/w2.err"
is $? 1 "upload --wait of a trace the server cannot ingest exits 1"
check "saying why, in the server's words" grep -q "could not ingest it: .*truncated JSON" "$T/w2.err"
"$NX" upload "$T/small.json" "$URL" --wait -q >"$T/w3.out" 2>"$T/w3.err"
ok $? "upload --wait -q"
is "$(wc -c <"$T/w3.err" | tr -d ' ')" 0 "-q: nothing on stderr"
is "$(grep -c '' "$T/w3.out")" 1 "-q: the id on stdout"

# poll_until ID STATUS...: poll until the trace has one of the statuses (or
# is gone: "gone"); prints it.  wait_ingesting ID: until it is ingesting.
poll_until() {
	"$PY" - "$URL/api/traces/$1" "$@" <<'EOF'
import json, sys, time, urllib.error, urllib.request
url, want = sys.argv[1], sys.argv[3:]
end = time.time() + 120
while time.time() < end:
    try:
        with urllib.request.urlopen(url) as r:
            st = json.load(r)["status"]
    except urllib.error.HTTPError as e:
        st = "gone" if e.code == 404 else "http %d" % e.code
    if st in want:
        print(st)
        sys.exit(0)
    time.sleep(0.005)
print("timeout")
EOF
}

# DELETE while it ingests: the ingest stops, the trace and its files go
"$GEN" -n 300000 -s 12 >"$T/other.json"
code=$(curl -s -o "$T/up2.json" -w '%{http_code}' --data-binary "@$T/other.json" "$URL/upload?name=other")
is "$code" 202 "another trace uploaded"
ID2=$(jget "$T/up2.json" 'j["id"]')
SHA2=$(jget "$T/up2.json" 'j["sha256"]')
is "$(poll_until "$ID2" ingesting ready)" ingesting "it is being ingested"
code=$(curl -s -o "$T/del.json" -w '%{http_code} %{time_total}' -X DELETE "$URL/api/traces/$ID2")
echo "# DELETE while ingesting: $code s"
is "${code% *}" 200 "DELETE while it ingests answers 200"
is "$(jget "$T/del.json" 'j["deleted"]')" "$ID2" "and names the trace deleted"
is "$(req GET "/api/traces/$ID2")" 404 "the trace is gone"
check "its ingest was cancelled, not finished" grep -q "ingest $ID2 cancelled" "$T/srv.err"
is "$(req GET /metrics)" 200 "metrics answer"
check "counted as cancelled, not as an error" sh -c \
	"grep -q '^nx_ingests_cancelled_total 1\$' '$T/body' && grep -q '^nx_ingest_errors_total 1\$' '$T/body'"
check "no temporary store left" test "$(ls "$T/srv/tmp" | wc -l)" -eq 0
check "its raw file went with it" test ! -e "$T/srv/raw/$SHA2"
check "its store is not there" test ! -e "$T/srv/traces/$ID2.db"
is "$(req GET "/api/traces?q=big")" 200 "the library lists"
is "$(jget "$T/body" '[t["status"] for t in j["traces"] if t["name"] == "big"]')" "['ready']" \
	"the trace ingested before is still there and ready"

# SIGTERM while it ingests (a .ntff this time, the capture's container):
# a prompt exit, the ingest resumes at the next start
"$NX" convert "$T/other.json" "$T/other.ntff"
ok $? "the trace wrapped in a .ntff"
code=$(curl -s -o "$T/up3.json" -w '%{http_code}' --data-binary "@$T/other.ntff" "$URL/upload?name=again")
is "$code" 202 "uploaded again"
ID3=$(jget "$T/up3.json" 'j["id"]')
is "$(poll_until "$ID3" ingesting ready)" ingesting "it is being ingested"
srv_stop
ok $? "SIGTERM while it ingests: exit 0"
check "the ingest stopped rather than finished" grep -q "ingest $ID3 cancelled" "$T/srv.err"
is "$("$PY" -c 'import sqlite3, sys
print(*sqlite3.connect(sys.argv[1]).execute(
    "SELECT status, progress, error FROM traces WHERE id = ?", (sys.argv[2],)).fetchone())' \
	"$T/srv/catalog.db" "$ID3")" "queued 0.0 None" "its row is queued again, with no error"
srv_start "$T/srv"
ok $? "server starts again"
is "$(poll_until "$ID3" ready failed)" ready "the stopped ingest resumes and completes"
srv_stop
ok $? "server stops"
done_testing
