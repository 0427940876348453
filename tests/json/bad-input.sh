#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/json/bad-input.sh - every kind of bad JSON input fails the ingest with
# a non-zero exit and a one-line message naming the file and the byte offset
# or event index, and leaves the traces already stored untouched; a few bad
# events are skipped and counted without failing the trace.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
PY=${PYTHON3:-/usr/bin/python3}
D="$NX_SRCDIR/tests/data/json"

"$NX" ingest --data "$T/d" --json "$D/small-object.json" >"$T/good.json"
ok $? "a good trace is stored first"
good_id=$(jget "$T/good.json" "j['id']")
snapshot() { (cd "$T/d/traces" && ls && sha256sum ./*) 2>&1; "$NX" info --data "$T/d" "$good_id" 2>&1; }
snapshot >"$T/before.txt"

# fails NAME FILE PATTERN: exit non-zero, one line on stderr naming the file
# and matching PATTERN (a grep -E regex).
fails() {
	"$NX" ingest --data "$T/d" "$2" >"$T/out.txt" 2>"$T/err.txt"
	rc=$?
	[ $rc -ne 0 ]; ok $? "$1: exit status non-zero ($rc)"
	is "$(wc -l <"$T/err.txt" | tr -d ' ')" 1 "$1: one-line message"
	grep -q "$(basename "$2")" "$T/err.txt"; ok $? "$1: message names the file"
	grep -Eq "$3" "$T/err.txt"; ok $? "$1: message says /$3/"
	sed 's/^/#   /' "$T/err.txt"
}

fails "not JSON" "$D/not-json.txt" "not (JSON|a trace).*(byte|offset) 0"
fails "truncated JSON" "$D/truncated.json" "byte [0-9]+: truncated JSON: event object starting at byte 67"
fails "wrong top-level shape" "$D/wrong-shape.json" "(wrong top-level shape|not a trace).*(byte|offset) 0"
fails "empty file" "$D/empty.json" "empty file"
printf '[1, 2, 3]\n' >"$T/numbers.json"
fails "an array of numbers" "$T/numbers.json" "opens like JSON, but byte 0x31 at offset 1 cannot start a trace array"
printf '\012\005garbage' >"$T/not-protobuf.pb"
fails "0x0a, then not protobuf" "$T/not-protobuf.pb" "opens like a Perfetto packet .* not well-formed protobuf"
fails "JSON that is not a trace" "$D/not-a-trace.json" "byte [0-9]+: not a trace: .*traceEvents"
fails "all events bad" "$D/all-bad.json" "all 3 events are bad; first: event 0 at byte 1: missing ph"

# Truncated gzip: a gzip'd trace cut short.
"$PY" -c "import gzip,sys; sys.stdout.buffer.write(gzip.compress(open(sys.argv[1],'rb').read()*40))" \
	"$D/small-object.json" >"$T/whole.json.gz"
head -c 600 "$T/whole.json.gz" >"$T/cut.json.gz"
fails "truncated gzip" "$T/cut.json.gz" "(truncated|corrupt|unexpected end).*gzip|gzip.*(truncated|corrupt)"

# Cut in the middle of a real trace.
if [ -n "$SHARED" ]; then
	head -c 300000 "$SHARED/catapult_flow.json" >"$T/flow-cut.json"
	fails "real trace cut mid-event" "$T/flow-cut.json" "byte 300000: truncated JSON: event object starting at byte [0-9]+"
else
	skip "no ../shared/traces"
fi

snapshot >"$T/after.txt"
is "$(ls -A "$T/d/tmp" | wc -l | tr -d ' ')" 0 "failed ingests leave no temporary files"
is "$(ls "$T/d/raw" | wc -l | tr -d ' ')" 1 "failed ingests leave no raw copy (only the good trace's)"
is "$(ls "$T/d/raw")" "$(sha256sum "$D/small-object.json" | cut -d' ' -f1)" "the raw copy is named by its sha256"
cmp -s "$T/before.txt" "$T/after.txt"; ok $? "nothing already stored changed"

# A few bad events are skipped and counted; the trace still ingests.
"$NX" ingest --data "$T/d" --json "$D/missing-fields.json" >"$T/mf.json" 2>"$T/mf.err"
ok $? "trace with bad events ingests"
is "$(jget "$T/mf.json" "j['bad_events']")" 5 "5 bad events counted"
is "$(jget "$T/mf.json" "j['slices']")" 3 "2 good slices and 1 unfinished X (no dur) kept"
is "$(jget "$T/mf.json" "j['unmatched']")" 1 "the unfinished X is counted unmatched"
is "$(jget "$T/mf.json" "j['instants']")" 1 "1 good instant kept"
is "$(jget "$T/mf.json" "j.get('first_bad_event', '')")" "event 2 at byte 150: missing ph" \
   "first bad event named with index and byte"

# Times beyond 9e15 us are bad events, written plainly or with an exponent, and say so.
printf '[{"ph":"X","name":"a","ts":9.1e15,"dur":1,"pid":1,"tid":1},
{"ph":"X","name":"b","ts":9100000000000000,"dur":1,"pid":1,"tid":1},
{"ph":"X","name":"c","ts":1,"dur":9.5E15,"pid":1,"tid":1},
{"ph":"X","name":"d","ts":8.9e15,"dur":1,"pid":1,"tid":1}]' >"$T/far.json"
"$NX" ingest --data "$T/d" --json "$T/far.json" >"$T/far.out" 2>&1
ok $? "a trace with far times ingests"
is "$(jget "$T/far.out" "j['bad_events'], j['slices'], j['first_bad_event']")" \
   "3 1 event 0 at byte 1: ts is out of range (beyond 9e15 us)" \
   "9.1e15, 9100000000000000 and dur 9.5E15: bad, out of range; 8.9e15 kept"
done_testing
