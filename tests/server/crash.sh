#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/server/crash.sh - kill -9 during an upload and during an ingest,
# restart on the same data directory: every acknowledged upload is there,
# unfinished ingests complete, ready traces answer unchanged, no partial
# files are left; SIGTERM during an ingest exits 0 and the ingest finishes or
# resumes at the next start.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/server/srv-lib.sh"
CHK="$PY $NX_SRCDIR/tests/server/check.py"
TR="$NX_SRCDIR/tests/data/server/basic.json"
GEN="$PY $NX_SRCDIR/tests/server/gen-trace.py"

$GEN 300000 "$T/big.json" 4 || skip_all "cannot generate a trace"
srv_start "$T/data" --workers 1
ok $? "server starts"
reference "$TR" "trace A ready before the crash"

# kill -9 while an upload is streaming (rate-limited, never acknowledged)
curl -s --limit-rate 200k -F "trace=@$T/big.json" "$URL/upload" -o /dev/null &
CURL=$!
sleep 1
check "a partial upload is on disk" sh -c "ls '$T/data/tmp' | grep -q ."
srv_kill9
kill "$CURL" 2>/dev/null; wait "$CURL" 2>/dev/null

srv_start "$T/data" --workers 1
ok $? "restart after kill -9 during an upload"
is "$(ls "$T/data/tmp" | wc -l | tr -d ' ')" 0 "partial upload removed at start"
is "$(req GET /api/traces)" 200 "list after restart"
is "$(jget "$T/body" 'j["total"]')" 1 "only the acknowledged trace exists"
is "$(req GET "/api/traces/$A/timeline?px=1000")" 200 "trace A answers"
check "trace A unchanged" cmp "$T/body" "$T/a-timeline.json"

# kill -9 while ingesting: the 202 was sent, so the trace must come back
code=$(curl -s -o "$T/b.json" -w '%{http_code}' -F "trace=@$T/big.json" "$URL/upload")
is "$code" 202 "big upload acknowledged"
B=$(jget "$T/b.json" 'j["id"]')
i=0
while [ $i -lt 100 ]; do
	s=$(curl -s "$URL/api/traces/$B" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["status"])')
	[ "$s" = ingesting ] && break
	sleep 0.05; i=$((i + 1))
done
is "$s" ingesting "kill -9 lands during the ingest"
srv_kill9
srv_start "$T/data" --workers 1
ok $? "restart after kill -9 during an ingest"
check "the interrupted ingest is redone and completes" wait_status "$B" ready
is "$(jget "$T/ws.json" 'j["slices"] > 290000')" True "re-ingested trace is whole"
is "$(req GET "/api/traces/$A/timeline?px=1000")" 200 "trace A still answers"
check "trace A still unchanged" cmp "$T/body" "$T/a-timeline.json"
check "raw file of B kept" test -s "$T/data/raw/$(jget "$T/b.json" 'j["sha256"]')"

# SIGTERM while an ingest runs: exit 0, nothing lost
code=$(curl -s -o "$T/c.json" -w '%{http_code}' --data-binary "@$T/big.json" "$URL/upload?name=c")
is "$code" 202 "third upload acknowledged"
C=$(jget "$T/c.json" 'j["id"]')
srv_stop
is "$?" 0 "SIGTERM with an ingest in flight: exit 0"
srv_start "$T/data" --workers 1
check "the trace is ready after restart (finished or resumed)" wait_status "$C" ready
check "no temporary files left" test "$(ls "$T/data/tmp" | wc -l)" -eq 0
srv_stop
done_testing
