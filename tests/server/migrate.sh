#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/server/migrate.sh - a trace stored by an older build (a lower trace
# schema version) is re-ingested from its raw file when the server starts,
# and answers as before; a current one is left alone.
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
srv_stop
done_testing
