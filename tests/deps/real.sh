#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/deps/real.sh - dependency queries over the explicit flows of a real
# trace (../shared/traces/catapult_flow.json, a 2015 Chrome trace with s/f
# flow events): the stored flow edges are what deps and critical-path see.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/deps/deps-lib.sh"
need_shared

id=$(ingest_id "$SHARED/catapult_flow.json")
ok $? "catapult_flow.json ingests"
nflow=$(jget "$T/ingest.json" "j['flows']['flow']")
ok "$([ "$nflow" -gt 0 ] && echo 0 || echo 1)" "it has flow edges ($nflow)"
db="$T/d/traces/$id.db"
dst=$("$NX" sql "$db" "SELECT dst FROM edges WHERE kind = 0 ORDER BY dst LIMIT 1")
src=$("$NX" sql "$db" "SELECT min(src) FROM edges WHERE kind = 0 AND dst = $dst")
"$NX" deps --data "$T/d" "$id" "$dst" --dir in --kinds flow --json >"$T/in.json"
ok $? "deps --dir in --kinds flow"
is "$(jget "$T/in.json" "min(e['src'] for e in j['edges'] if e['dst'] == $dst)")" "$src" \
	"the stored flow edge is found from its destination"
"$NX" deps --data "$T/d" "$id" "$src" --dir out --kinds flow --json >"$T/out.json"
is "$(jget "$T/out.json" "any(e['dst'] == $dst for e in j['edges'])")" "True" \
	"and from its source"
"$NX" critical-path --data "$T/d" "$id" --event "$dst" --kinds flow --json >"$T/cp.json"
is "$(jget "$T/cp.json" "len(j['hops']) >= 2 and j['hops'][-1]['id'] == $dst and j['hops'][-1]['kind'] == 'flow'")" \
	"True" "the critical path ending there follows the flow"
done_testing
