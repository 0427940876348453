#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/server/migrate.sh - a trace stored by an older build (a lower trace
# schema version), or whose store file is gone, is re-ingested from its raw
# file when the server starts, and answers as before; a current one is left
# alone; one whose raw file is gone too is failed with why.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/server/srv-lib.sh"
TR="$NX_SRCDIR/tests/data/server/basic.json"
command -v sqlite3 >/dev/null || skip_all "sqlite3 CLI not installed"

srv_start "$T/data" --workers 1
ok $? "server starts"
curl -s -F "trace=@$TR" "$URL/upload?wait=1" -o "$T/a.json"
A=$(jget "$T/a.json" 'j["id"]')
curl -s -F "trace=@$TR" "$URL/upload?wait=1&name=second" -o "$T/b.json"
B=$(jget "$T/b.json" 'j["id"]')
is "$(jget "$T/a.json" 'j["status"]')" ready "trace A ready"
req GET "/api/traces/$A/timeline?px=1000" >/dev/null
cp "$T/body" "$T/a-timeline.json"
srv_stop

db="$T/data/traces/$A.db"
want=$(sqlite3 "$db" 'PRAGMA user_version')
old=$((want - 1))
sqlite3 "$db" "PRAGMA user_version=$old"
is "$(sqlite3 "$db" 'PRAGMA user_version')" "$old" "trace A now looks written by an older build"
mtime_b=$(stat -c %Y.%s "$T/data/traces/$B.db"; ls -i "$T/data/traces/$B.db")

srv_start "$T/data" --workers 1
ok $? "server restarts"
check "trace A is re-ingested" wait_status "$A" ready
is "$(sqlite3 "$db" 'PRAGMA user_version')" "$want" "trace A is in this build's layout again"
is "$(req GET "/api/traces/$A/timeline?px=1000")" 200 "trace A answers"
check "trace A's timeline is unchanged" cmp "$T/body" "$T/a-timeline.json"
is "$(stat -c %Y.%s "$T/data/traces/$B.db"; ls -i "$T/data/traces/$B.db")" "$mtime_b" \
	"a current trace is not rewritten"
printf '[{"ph":"X","name":"only-c","ts":1,"dur":2,"pid":1,"tid":1}]' >"$T/c.json"
curl -s -F "trace=@$T/c.json" "$URL/upload?wait=1" -o "$T/c-up.json"
C=$(jget "$T/c-up.json" 'j["id"]')
is "$(jget "$T/c-up.json" 'j["status"]')" ready "trace C ready"
srv_stop

# a backup restored without DATA/traces: stores rebuilt from the raw files; a
# trace whose raw file is gone too is failed with why, not "ready" with no store
rm -f "$T/data/traces/$A.db" "$T/data/traces/$C.db" "$T/data/raw/$(jget "$T/c-up.json" 'j["sha256"]')"
srv_start "$T/data" --workers 1
ok $? "server restarts without the stores"
check "trace A is re-ingested from its raw file" wait_status "$A" ready
is "$(req GET "/api/traces/$A/timeline?px=1000")" 200 "trace A answers"
check "trace A's timeline is unchanged" cmp "$T/body" "$T/a-timeline.json"
check "trace C, its raw file gone too, is failed" wait_status "$C" failed
is "$(jget "$T/ws.json" 'j["error"]')" \
	"the trace store and its raw file are both missing: upload the trace again" "trace C says why"
is "$(req GET "/api/traces/$C/timeline?px=1000")" 409 "trace C's contents: 409, not 500"
srv_stop
done_testing
