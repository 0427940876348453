#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/server/status-race.sh - a trace polled while its ingest ends reads
# "ingesting" only with a phase: the catalog row read before the worker
# committed its end, checked after the worker let go of the trace, once
# gave "ingesting" with phase null (docs/api.md: phase is null only when
# not ingesting).  Small uploads, each polled without pause until it ends,
# through GET /api/traces/ID and the library list.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$NX_SRCDIR/tests/server/srv-lib.sh"
PY=${PYTHON3:-python3}
srv_start "$T/d" --workers 2 || skip_all "server did not start"
"$PY" - "$URL" 40 >"$T/out" 2>"$T/err" <<'PYEOF'
import json, sys, urllib.request
url, n = sys.argv[1], int(sys.argv[2])
ev = [{"ph": "X", "pid": 1, "tid": 1, "ts": i, "dur": 1, "name": "s%d" % (i % 50)}
      for i in range(20000)]
body = json.dumps({"traceEvents": ev}).encode()
def get(path):
    with urllib.request.urlopen(url + path) as r:
        return json.load(r)
bad, polls, ended = [], 0, 0
for k in range(n):
    req = urllib.request.Request(url + "/upload?name=r%d" % k, data=body + b" " * k,
                                 method="POST")
    with urllib.request.urlopen(req) as r:
        tid = json.load(r)["id"]
    while True:
        o = get("/api/traces/" + tid)
        lst = get("/api/traces?limit=5")["traces"]
        polls += 1
        for t in [o] + lst:
            if (t["status"] == "ingesting") != (t["phase"] is not None):
                bad.append((t["id"], t["status"], t["phase"]))
        if o["status"] in ("ready", "failed"):
            ended += o["status"] == "ready"
            break
print(n, ended, polls, len(bad))
for b in bad[:5]:
    print("#", *b)
PYEOF
ok $? "40 uploads polled until each ended"
set -- $(head -1 "$T/out")
is "${2:-}" 40 "all 40 ingested"
is "${4:-}" 0 "a phase exactly while ingesting, in ${3:-0} polls of a trace and the list"
tail -n +2 "$T/out"
done_testing
