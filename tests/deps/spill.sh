#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/deps/spill.sh - the edge collector's memory budget (NX_EDGE_RAM_MB):
# a synthetic engine trace (tests/deps-gen) whose edges go past a 1 MiB
# budget, so most of them take the spill file, stores exactly the edges that
# the default budget (all in memory) stores.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/deps/deps-lib.sh"

gen_trace 80000 7
# ingest_with DIR [VAR=VALUE...]: the id; the "edge pages" line in DIR.lines
ingest_with() {
	iw_dir=$1
	shift
	ingest_timed "$iw_dir" '^store: edge pages' "$@"
}
# spilled DIR: MB spilled, as printed
spilled() { sed 's/.* MB in memory *\([0-9.]*\) MB spilled.*/\1/' "$1.lines"; }
budget() { sed 's/.*(budget \([0-9.]*\) MB).*/\1/' "$1.lines"; }

a=$(ingest_with "$T/a" NX_EDGE_RAM_MB=1)
ok $? "ingest with a 1 MiB edge budget"
b=$(ingest_with "$T/b")
ok $? "ingest with the default budget"
is "$(budget "$T/a")" "1.0" "NX_EDGE_RAM_MB=1 sets the budget"
is "$(awk -v s="$(spilled "$T/a")" 'BEGIN { print (s > 1) }')" "1" \
	"the edges beyond it go to the spill file ($(spilled "$T/a") MB)"
is "$(spilled "$T/b")" "0.0" "the default budget keeps them in memory"
is "$(awk -v s="$(budget "$T/b")" 'BEGIN { print (s >= 67.1) }')" "1" \
	"the default budget is at least 64 MiB ($(budget "$T/b") MB)"

na=$(jget "$T/a.json" "sum(j['flows'].values())")
is "$na" "$(jget "$T/b.json" "sum(j['flows'].values())")" "the same number of edges ($na)"
is "$(awk -v n="$na" 'BEGIN { print (n > 200000) }')" "1" "enough of them to spill"
sum() { "$NX" sql "$1" "SELECT src, dst, kind, label FROM edges" | md5sum; }
is "$(sum "$T/a/traces/$a.db")" "$(sum "$T/b/traces/$b.db")" \
	"the same edges, in the same order, labels included"
"$NX" deps --data "$T/a" "$a" 40000 --json >"$T/da.json" &&
	"$NX" deps --data "$T/b" "$b" 40000 --json >"$T/db.json"
ok $? "deps of one event from both"
is "$(jget "$T/da.json" "j['edges']")" "$(jget "$T/db.json" "j['edges']")" \
	"the same answer"
is "$(jget "$T/da.json" "len(j['edges']) > 0")" "True" "and it has edges"

for bad in 0 x 99999; do
	c=$(ingest_with "$T/c$bad" NX_EDGE_RAM_MB=$bad)
	is "$(budget "$T/c$bad")" "$(budget "$T/b")" "NX_EDGE_RAM_MB=$bad is ignored"
done
done_testing
