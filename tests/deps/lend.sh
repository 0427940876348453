#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/deps/lend.sh - the dependency edges collected in the memory of the
# args the analysis has read (store/st-spill.c, st_spill_lend()): the same
# events and edges as in new pages (NX_EDGES_IN_ARGS=0), with one thread
# handing edges to the store or a reporter thread (NX_DEPS_THREADS=4), for a
# trace written in time order, one written unit after unit (the units read
# last hold the others' memory back), one written backwards (no unit's args
# in id order: nothing lent) and args partly in a spill file (nothing lent).
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/deps/deps-lib.sh"

gen_trace 60000 17
cp "$T/trace.json" "$T/in-time.json"
# reorder HOW: $T/in-time.json's events by unit (stable) or backwards into $T/in-HOW.json
reorder() {
	"${PYTHON3:-python3}" - "$T/in-time.json" "$T/in-$1.json" "$1" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
ev = j["traceEvents"]
if sys.argv[3] == "by-unit":
    ev.sort(key=lambda e: (e.get("pid", 0), e.get("tid", 0)))
else:
    ev.reverse()
json.dump(j, open(sys.argv[2], "w"))
EOF
}
reorder by-unit
ok $? "the trace written unit after unit"
reorder backwards
ok $? "the trace written backwards"

# run NAME FILE [VAR=VALUE...]: ingest FILE into $T/NAME; the id
run() {
	r_name=$1
	cp "$2" "$T/trace.json"
	shift 2
	ingest_timed "$T/$r_name" '^store: edge pages' "$@"
}
# lent NAME: the MB of edge pages in the args' memory, as printed
lent() { sed 's/.*, \([0-9.]*\) MB in the args.*/\1/' "$T/$1.lines"; }
gt() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b) }'; }
sum() {
	"$NX" sql "$T/$1/traces/$2.db" \
		"SELECT id, unit, ts, dur, depth, name, cat, kind, value, args FROM events" | md5sum
}
esum() { "$NX" sql "$T/$1/traces/$2.db" "SELECT src, dst, kind, label FROM edges" | md5sum; }
ecount() { "$NX" sql "$T/$1/traces/$2.db" "SELECT count(*) FROM edges"; }

# same NAME FILE WHAT VAR=VALUE...: NAME with the variables against NAME0
# (the same file in new pages): the same events and edges
same() {
	s_name=$1
	s_file=$2
	s_what=$3
	shift 3
	s_a=$(run "$s_name" "$s_file" "$@")
	ok $? "$s_what: ingested"
	s_b=$(run "${s_name}0" "$s_file" NX_EDGES_IN_ARGS=0 "$@")
	ok $? "$s_what: ingested with NX_EDGES_IN_ARGS=0"
	is "$(lent "${s_name}0")" "0.0" "$s_what: NX_EDGES_IN_ARGS=0 lends nothing"
	is "$(sum "$s_name" "$s_a")" "$(sum "${s_name}0" "$s_b")" "$s_what: the same events"
	is "$(esum "$s_name" "$s_a")" "$(esum "${s_name}0" "$s_b")" "$s_what: the same edges"
	is "$(gt "$(ecount "$s_name" "$s_a")" 100000)" "1" \
		"$s_what: $(ecount "$s_name" "$s_a") edges"
}

same time "$T/in-time.json" "time order"
time_id=$s_a
is "$(gt "$(lent time)" 5)" "1" "time order: $(lent time) MB of edge pages in the args' memory"
is "$("$NX" sql "$T/time/traces/$time_id.db" "PRAGMA integrity_check")" "ok" \
	"  and the store passes SQLite's integrity check"

same rep "$T/in-time.json" "a reporter thread" NX_DEPS_THREADS=4
is "$(gt "$(lent rep)" 5)" "1" "a reporter thread: $(lent rep) MB lent"
is "$(esum rep "$s_a")" "$(esum time "$time_id")" \
	"a reporter thread: the same edges as one thread"

same unit "$T/in-by-unit.json" "unit after unit"
is "$(gt "$(lent unit)" 0.5)" "1" "unit after unit: $(lent unit) MB lent"
is "$(gt "$(lent time)" "$(lent unit)")" "1" "  less than in time order (the units read last hold theirs)"

same back "$T/in-backwards.json" "backwards"
is "$(lent back)" "0.0" "backwards: nothing lent"

same file "$T/in-time.json" "args partly in a file" NX_SPILL_RAM_MB=2
is "$(lent file)" "0.0" "args partly in a file: nothing lent"
done_testing
