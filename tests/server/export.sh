#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/server/export.sh - GET /api/traces/ID/export: an uploaded run comes
# out as a .pftrace that ingests back to the same store (units and kinds,
# events, edges with labels) and as Chrome JSON with the same events; bad
# format, unknown and not-ready traces get JSON errors; no file is left in
# DATA/tmp.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/server/srv-lib.sh"
TR="$NX_SRCDIR/tests/data/deps/cuda-sync.json"

srv_start "$T/data"
ok $? "server starts"
ID=$(upload_wait "$TR" "")
is "$(jget "$T/up.json" 'j["status"]')" ready "cuda-sync.json uploaded and ready"

curl -s -D "$T/hdr" -o "$T/x.pftrace" "$URL/api/traces/$ID/export"
grep -q "^HTTP/1.1 200" "$T/hdr"; ok $? "export answers 200 (pftrace by default)"
grep -qi '^Content-Disposition: attachment; filename="cuda-sync.pftrace"' "$T/hdr"
ok $? "as a download named after the run"
B=$("$NX" ingest --data "$T/d2" --json "$T/x.pftrace" | jget /dev/stdin "j['id']")
ok $? "the download ingests"
store_digest "$T/data" "$ID" >"$T/want"
store_digest "$T/d2" "$B" >"$T/got"
cmp -s "$T/want" "$T/got"; ok $? "to the same units, events and edges ($(wc -l <"$T/want") rows)"
diff "$T/want" "$T/got" | head -5 | sed 's/^/#   /'

is "$(curl -s -o "$T/x.json" -w '%{http_code} %{content_type}' "$URL/api/traces/$ID/export?format=json")" \
   "200 application/json" "format=json answers Chrome JSON"
C=$("$NX" ingest --data "$T/d3" --json "$T/x.json" | jget /dev/stdin "j['slices'], j['flows']['flow']")
is "$C" "$(jget "$T/up.json" "j['slices'], j['flows']['flow']")" "with the same slices and flows"

is "$(req GET "/api/traces/$ID/export?format=xml")" 400 "an unknown format is 400"
is "$(jget "$T/body" 'j["error"], "pftrace or json" in j["detail"]')" "bad_request True" \
   "saying which formats there are"
is "$(req GET /api/traces/0123456789abcdef/export)" 404 "an unknown trace is 404"
is "$(req POST '/upload?wait=1' -F "trace=@$NX_SRCDIR/tests/data/json/truncated.json")" 422 \
   "a truncated file fails to ingest"
F=$(jget "$T/body" 'j["id"]')
is "$(req GET "/api/traces/$F/export")" 409 "so it cannot be exported: 409"
is "$(jget "$T/body" 'j["error"]')" not_ready "not_ready"
is "$(ls "$T/data/tmp" | wc -l | tr -d ' ')" 0 "no temporary file is left in DATA/tmp"
grep -q 'route="export"' "$T/metrics" 2>/dev/null || req GET /metrics >/dev/null
grep -q 'route="export"' "$T/body"; ok $? "exports are counted in /metrics"
srv_stop
ok $? "server stops"
done_testing
