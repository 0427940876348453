#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/server/concurrency.sh - concurrent uploads on loopback (bounded):
# within the limits all are stored; beyond --max-uploads / --max-queue the
# extra ones get 503 + Retry-After, never a hang; reads keep working.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/server/srv-lib.sh"
TR="$NX_SRCDIR/tests/data/server/basic.json"

srv_start "$T/data" --workers 2 --max-uploads 8
ok $? "server starts"
for i in 1 2 3 4 5 6; do
	curl -s -o "$T/u$i.json" -w '%{http_code}\n' -F "trace=@$TR" -F "name=c$i" "$URL/upload" \
		>"$T/u$i.code" &
	PIDS="${PIDS:-} $!"
done
for p in $PIDS; do wait "$p"; done
is "$(cat "$T"/u*.code | sort | uniq -c | tr -s ' ' | sed 's/^ //')" "6 202" "6 concurrent uploads: all 202"
for i in 1 2 3 4 5 6; do
	wait_status "$(jget "$T/u$i.json" 'j["id"]')" ready || break
done
ok $? "all 6 become ready"
is "$(req GET /api/traces)" 200 "list"
is "$(jget "$T/body" 'j["total"]')" 6 "6 traces, one raw file"
is "$(ls "$T/data/raw" | wc -l | tr -d ' ')" 1 "dedup under concurrency"
srv_stop

# tight limits: 1 upload at a time; a slow upload holds the slot
srv_start "$T/data" --workers 1 --max-uploads 1 --max-queue 1
head -c 300000 /dev/zero | tr '\0' ' ' >"$T/pad"
{ printf '{"traceEvents":['; cat "$T/pad"; printf '{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}]}'; } >"$T/slow.json"
curl -s --limit-rate 100k -F "trace=@$T/slow.json" "$URL/upload" -o "$T/slow.out" &
SLOW=$!
sleep 0.5
code=$(curl -s -D "$T/h503" -o "$T/body" -w '%{http_code}' -F "trace=@$TR" "$URL/upload")
is "$code" 503 "second concurrent upload over --max-uploads: 503"
is "$(jget "$T/body" 'j["error"]')" busy "503 code busy"
check "503 has Retry-After" grep -qi '^retry-after:' "$T/h503"
is "$(req GET /healthz)" 200 "reads work while an upload streams"
wait "$SLOW"
is "$(jget "$T/slow.out" 'j["status"]')" queued "the slow upload completes"
srv_stop
done_testing
