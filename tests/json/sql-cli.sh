#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/json/sql-cli.sh - `neuron-explorer sql`: a trace by library id or by
# file, the events and edges tables, --header and --json, read-only, and a
# one-line error with a non-zero exit for every kind of bad request.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
"$NX" ingest --data "$T/d" --json "$NX_SRCDIR/tests/data/json/edge-kinds.json" >"$T/o.json"
ok $? "ingest"
id=$(jget "$T/o.json" "j['id']")
n=$(jget "$T/o.json" "j['slices'] + j['instants'] + j['counters']")
is "$("$NX" sql --data "$T/d" "$id" "SELECT count(*) FROM events")" "$n" "by id: every event is a row"
is "$("$NX" sql "$T/d/traces/$id.db" "SELECT count(*) FROM events")" "$n" "by file: the same"
is "$("$NX" sql --data "$T/d" "$id" "SELECT count(*) FROM edges")" \
	"$(jget "$T/o.json" "sum(j['flows'].values())")" "edges: one row per stored edge"
is "$("$NX" sql --data "$T/d" --header "$id" "SELECT 1 AS a, NULL AS b, 'x' AS c")" \
	"$(printf 'a|b|c\n1||x')" "--header, NULL as nothing, columns joined by |"
is "$("$NX" sql --data "$T/d" --json "$id" "SELECT 1 AS a, NULL AS b")" '[{"a":1,"b":null}]' \
	"--json: an array of objects"

"$NX" sql --data "$T/d" "$id" "DELETE FROM units" 2>"$T/e1"
is $? 1 "writing is refused"
check "the refusal is one line naming the command" \
	sh -c "[ \$(wc -l <'$T/e1') -eq 1 ] && grep -q '^neuron-explorer sql: .*readonly' '$T/e1'"
"$NX" sql --data "$T/d" "$id" "SELEC 1" 2>"$T/e2"
is $? 1 "bad SQL exits 1"
check "bad SQL: the parser's message" grep -q 'syntax error' "$T/e2"
"$NX" sql --data "$T/d" 0123456789abcdef "SELECT 1" 2>"$T/e3"
is $? 1 "an id not in the library exits 1"
check "it says which id and where" grep -q 'no trace 0123456789abcdef in' "$T/e3"
"$NX" sql --data "$T/d" "$T/nothing-here" "SELECT 1" 2>"$T/e4"
is $? 1 "neither an id nor a file exits 1"
check "it says so" grep -q 'neither a trace id' "$T/e4"
"$NX" sql --data "$T/d" 2>/dev/null
check "no query is a usage error" test $? -eq 2
is "$("$NX" sql --data "$T/d" "$id" "SELECT count(*) FROM events")" "$n" "the trace is unchanged"

# The human summaries count in the singular where there is one.
printf '{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"one"},{"ph":"i","pid":1,"tid":1,"ts":5,"name":"mark","s":"t"}]}' >"$T/one.json"
"$NX" ingest --data "$T/d1" "$T/one.json" >"$T/one.out"
ok $? "ingest of one slice and one instant"
check "its line: 1 slice, 1 instant, 0 counter samples, 1 unit, 0 flow edges" \
	grep -q ': 1 slice, 1 instant, 0 counter samples, 1 unit, 0 flow edges, ' "$T/one.out"
id1=$(cut -d' ' -f1 "$T/one.out")
check "info of it: 1 slice, 1 instant, 0 counter samples" \
	sh -c "'$NX' info --data '$T/d1' '$id1' | grep -q '^  1 slice, 1 instant, 0 counter samples, span '"
check "the library list: 2 events, then 1 event" \
	sh -c "'$NX' info --data '$T/d1' | grep -Eq '^$id1  ready +json +2 events  one.json\$' &&
	       printf '{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2,\"name\":\"a\"}]}' >'$T/single.json' &&
	       '$NX' ingest --data '$T/d1' '$T/single.json' >/dev/null &&
	       '$NX' info --data '$T/d1' | grep -Eq '^[0-9a-f]+  ready +json +1 event   single.json\$'"
check "and the plural for more: $n events" \
	sh -c "'$NX' info --data '$T/d' '$id' | grep -q '^  [0-9]* slices, [0-9]* instants, '"

# Standard output that cannot be written fails the command, with the reason
# (the commands that print a report exited 0 with it lost).
if [ -c /dev/full ]; then
	for c in "info --data $T/d" "info --data $T/d $id" "critical-path --data $T/d $id" version; do
		# shellcheck disable=SC2086 # the words of $c are the arguments
		"$NX" $c >/dev/full 2>"$T/e5"
		is $? 1 "${c%% *} onto a full device exits 1"
		check "saying why" grep -q 'writing standard output: No space left on device' "$T/e5"
	done
else
	for n in 1 2 3 4 5 6 7 8; do skip "no /dev/full"; done
fi
done_testing
