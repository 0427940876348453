#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/server/disk-full.sh - a data directory that runs out of space (a
# small tmpfs; needs root to mount it, skipped otherwise): an upload that does
# not fit gets 507 with a JSON error and leaves no partial file; an upload
# that fits but whose ingest does not is kept and marked failed with the
# reason; the traces stored before answer unchanged, before and after a
# restart; once there is room again, POST /api/traces/ID/retry ingests it
# from the kept raw file.
. "$NX_SRCDIR/tests/lib.sh"
. "$NX_SRCDIR/tests/server/srv-lib.sh"
GEN="$PY $NX_SRCDIR/tests/server/gen-trace.py"
TR="$NX_SRCDIR/tests/data/server/basic.json"

[ "$(id -u)" = 0 ] || skip_all "mounting a tmpfs needs root"
command -v mount >/dev/null 2>&1 || skip_all "no mount(8)"
mkdir -p "$T/small"
mount -t tmpfs -o size=24m tmpfs "$T/small" 2>/dev/null || skip_all "cannot mount a tmpfs here"
at_exit "umount '$T/small'"

$GEN 300000 "$T/big.json" 4 || skip_all "cannot generate a trace"
$GEN 20000 "$T/mid.json" 4 || skip_all "cannot generate a trace"
D="$T/small/d"
srv_start "$D" --workers 1
ok $? "server starts on a 24 MiB tmpfs"
reference "$TR" "a small trace is ingested"

# an upload larger than the free space
code=$(curl -s -o "$T/big.out" -w '%{http_code}' -F "trace=@$T/big.json" "$URL/upload")
is "$code" 507 "an upload that does not fit: 507 ($(wc -c <"$T/big.json") bytes)"
is "$(jget "$T/big.out" 'j["error"]')" no_space "with a JSON error"
is "$(ls "$D/tmp" | wc -l | tr -d ' ')" 0 "and no partial file left"
is "$(ls "$D/raw" | wc -l | tr -d ' ')" 1 "nothing added to raw/"

# fill the disk so that the next upload fits but its store does not
free_kb=$(df -Pk "$T/small" | awk 'NR == 2 { print $4 }')
mid_kb=$(( $(wc -c <"$T/mid.json") / 1024 ))
dd if=/dev/zero of="$T/small/filler" bs=1k count=$((free_kb - mid_kb - 200)) 2>/dev/null
code=$(curl -s -o "$T/mid.out" -w '%{http_code}' -F "trace=@$T/mid.json" "$URL/upload?wait=1")
is "$code" 422 "an upload that fits but whose ingest does not: 422 ingest_failed"
M=$(jget "$T/mid.out" 'j["id"]')
is "$(jget "$T/mid.out" 'j["error"]')" ingest_failed "with the JSON error of a failed ingest"
req GET "/api/traces/$M" >/dev/null
is "$(jget "$T/body" 'j["status"]')" failed "the trace is marked failed"
is "$(jget "$T/body" 'j["error"].split(" (")[0]')" "its upload: no space left in $D for its trace store" \
	"the reason names the data directory"
check "and the room left there" grep -q 'free there now)' "$T/body"
is "$(ls "$D/raw" | wc -l | tr -d ' ')" 2 "its upload is kept in raw/"
is "$(ls "$D/tmp" | wc -l | tr -d ' ')" 0 "no partial store left in tmp/"
is "$(req GET "/api/traces/$A/timeline?px=1000")" 200 "the trace stored before answers"
check "unchanged" cmp "$T/body" "$T/a-timeline.json"

srv_stop
ok $? "SIGTERM on a full disk exits 0"
srv_start "$D" --workers 1
ok $? "restart on the full disk"
is "$(req GET "/api/traces/$A/timeline?px=1000")" 200 "the trace stored before answers after the restart"
check "unchanged" cmp "$T/body" "$T/a-timeline.json"

# the CLI on the same full disk (the filler is still there): one line naming the file and
# the directory
"$NX" ingest --data "$D" "$T/mid.json" >/dev/null 2>"$T/cli.err"
is "$?" 1 "CLI ingest on a full disk fails"
check "saying so in one line" sh -c "[ \$(wc -l <'$T/cli.err') = 1 ] &&
	grep -q '^neuron-explorer ingest: mid.json ([0-9.]* [KM]iB): no space left in $D to keep it and its trace store' '$T/cli.err'"
is "$(ls "$D/tmp" | wc -l | tr -d ' ')" 0 "leaving nothing in tmp/"

# room again: the failed trace is retried from its kept raw file
rm -f "$T/small/filler"
is "$(req GET "/api/traces/$M/retry")" 405 "retry: GET is not allowed"
is "$(req POST "/api/traces/$A/retry")" 409 "retry of a ready trace: 409"
is "$(jget "$T/body" 'j["error"]')" not_failed "not_failed"
is "$(req POST /api/traces/0123456789abcdef/retry)" 404 "retry of no trace: 404"
is "$(req POST "/api/traces/$M/retry")" 202 "retry of the failed trace: 202"
is "$(jget "$T/body" 'j["status"]')" queued "queued again"
wait_status "$M" ready
ok $? "with room again it ingests from the kept raw file"
req GET "/api/traces/$M" >/dev/null
is "$(jget "$T/body" 'j["slices"]')" 20000 "all of it"
is "$(jget "$T/body" 'j["error"]')" None "and the reason is gone"
is "$(req POST "/api/traces/$M/retry")" 409 "a second retry: 409"
# and the same file uploaded again makes a new trace sharing the raw file
code=$(curl -s -o "$T/mid2.out" -w '%{http_code}' -F "trace=@$T/mid.json" "$URL/upload?wait=1")
is "$code" 201 "the same file uploaded again ingests"
is "$(ls "$D/raw" | wc -l | tr -d ' ')" 2 "sharing the raw file kept before"
srv_stop
done_testing
