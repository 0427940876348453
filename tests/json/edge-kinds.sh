#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/json/edge-kinds.sh - flows whose category is nx.order / nx.anti /
# nx.output (written by the CUPTI collector for cross-stream event waits)
# become edges of that kind; every other flow is a `flow` edge.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
"$NX" ingest --data "$T/d" --json "$NX_SRCDIR/tests/data/json/edge-kinds.json" >"$T/o.json"
ok $? "ingest"
is "$(jget "$T/o.json" "j['flows']['order']")" 1 "nx.order flow stored as an order edge"
is "$(jget "$T/o.json" "j['flows']['flow']")" 1 "ac2g flow stored as a flow edge"
id=$(jget "$T/o.json" "j['id']")
is "$("$NX" sql "$T/d/traces/$id.db" "SELECT a.s || '>' || b.s FROM edges e JOIN events x ON x.id=e.src JOIN events y ON y.id=e.dst JOIN strings a ON a.id=x.name JOIN strings b ON b.id=y.name WHERE e.kind=1")" "k1>k2" "order edge joins the recording and the waiting kernel"
done_testing
