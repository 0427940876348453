#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/deps/file-order.sh - the analysis goes by time, not by where events
# lie in the file: a synthetic engine trace (tests/deps-gen, no two events
# of it with the same start and end) ingested as written, with its events
# shuffled and with them in reverse, stores the same events and the same
# edges, compared by what they are (unit name, times, kind, label), not by
# id (ids and unit numbers follow first appearance).  Small sorted runs
# (NX_STORE_RUN_KEYS) so that every order spreads a unit over many of them,
# and NX_DEPS_CHECK=1 so that the analysis's readers are compared with the
# events table too.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/deps/deps-lib.sh"

gen_trace 40000 7
# reorder HOW: $T/trace.json with its events (one a line) reordered
reorder() {
	"${PYTHON3:-python3}" - "$T/trace.json" "$1" <<'PY'
import random, sys
lines = open(sys.argv[1]).read().split('\n')
meta = [l.rstrip(',') for l in lines if '"ph": "M"' in l]
evs = [l.rstrip(',') for l in lines if '"ph": "X"' in l]
if sys.argv[2] == 'shuffle':
    random.Random(7).shuffle(evs)
else:
    evs.reverse()
print('{"traceEvents": [\n' + ',\n'.join(meta + evs) + '\n]}')
PY
}
reorder shuffle >"$T/shuffled.json"
ok $? "a shuffled copy"
reorder reverse >"$T/reversed.json"
ok $? "a reversed copy"
is "$(grep -c '"ph": "X"' "$T/shuffled.json")" 40000 "  with every event"

# store FILE DIR: ingest FILE into DIR with the check on (its answer in
# DIR.out); the db's path
store() {
	NX_DEPS_CHECK=1 NX_STORE_RUN_KEYS=1500 "$NX" ingest --data "$2" --json "$1" \
		>"$2.out" 2>"$2.err" || return 1
	echo "$2/traces/$(jget "$2.out" "j['id']").db"
}
evs() {
	"$NX" sql "$1" "SELECT u.name, e.ts, e.dur, s.s, e.args FROM events e
	  JOIN units u ON u.id = e.unit JOIN strings s ON s.id = e.name ORDER BY 1, 2, 3" |
		md5sum
}
eds() {
	"$NX" sql "$1" "SELECT s.ts, us.name, d.ts, ud.name, e.kind, e.label FROM edges e
	  JOIN events s ON s.id = e.src JOIN units us ON us.id = s.unit
	  JOIN events d ON d.id = e.dst JOIN units ud ON ud.id = d.unit ORDER BY 1, 2, 3, 4, 5, 6" |
		tee "$1.edges" | md5sum
}
a=$(store "$T/trace.json" "$T/a")
ok $? "the trace as written ingests"
n=$("$NX" sql "$a" "SELECT count(*) FROM edges")
is "$(awk -v n="$n" 'BEGIN { print (n > 100000) }')" 1 "  with its edges ($n)"
for how in shuffled reversed; do
	db=$(store "$T/$how.json" "$T/$how")
	ok $? "the $how copy ingests (the readers agree with the events table)"
	is "$(evs "$db")" "$(evs "$a")" "  the same events"
	is "$(eds "$db")" "$(eds "$a")" "  the same edges, kinds and labels"
	is "$(jget "$T/$how.out" "j['flows']")" "$(jget "$T/a.out" "j['flows']")" \
		"  the same counts by kind"
done
check "and not alike by chance: the comparison sees one changed label" \
	sh -c "sed '1s/.\$/#/' '$a.edges' | cmp -s - '$T/shuffled/traces/'*.db.edges; test \$? -eq 1"
is "$(cmp "$a.edges" "$T/shuffled/traces/"*.db.edges && wc -l <"$a.edges" | tr -d ' ')" "$n" \
	"  (every stored edge listed: $n)"
done_testing
