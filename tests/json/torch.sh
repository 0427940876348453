#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/json/torch.sh - Debian's python3-torch profiler writes a trace now
# (torch 1.13 without Kineto: the legacy bare array, pid "CPU functions",
# no cat); it must ingest with every event accounted for.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
PY=/usr/bin/python3
"$PY" -c 'import torch' 2>/dev/null || skip_all "no python3-torch"

"$PY" - "$T/torch.json" <<'PYEOF' >"$T/py.txt" 2>&1
import sys, torch
from torch.profiler import profile, ProfilerActivity
model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(8 * 14 * 14, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
with profile(activities=[ProfilerActivity.CPU]) as prof:
    for _ in range(2):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
prof.export_chrome_trace(sys.argv[1])
PYEOF
ok $? "torch profiler wrote a trace"
[ -s "$T/torch.json" ] || { cat "$T/py.txt" | sed 's/^/#   /'; done_testing; }

# The file's own counts, read by Python's json module (torch may leave a
# trailing comma and no closing ']', which catapult and we accept).
"$PY" - "$T/torch.json" >"$T/want.txt" <<'PYEOF'
import json, re, sys
t = open(sys.argv[1]).read().rstrip()
t = re.sub(r',\s*$', '', t)
if t.startswith('[') and not t.endswith(']'):
    t += ']'
j = json.loads(t)
ev = j['traceEvents'] if isinstance(j, dict) else j
print(sum(1 for e in ev if e.get('ph') == 'X'), sum(1 for e in ev if e.get('ph') in ('i', 'I')),
      'array' if isinstance(j, list) else 'object')
PYEOF
set -- $(cat "$T/want.txt")
echo "# torch trace: $1 X events, $2 instants, $3 form"
[ "$1" -gt 10 ]; ok $? "torch trace has X events ($1)"

"$NX" ingest --data "$T/d" --json "$T/torch.json" >"$T/got.json" 2>"$T/err.txt"
ok $? "ingest of the torch trace succeeds"
sed 's/^/#   /' "$T/err.txt"
is "$(jget "$T/got.json" "j['slices']")" "$1" "every X event is a slice"
is "$(jget "$T/got.json" "j['instants']")" "$2" "every instant is kept"
is "$(jget "$T/got.json" "j['bad_events']")" 0 "no bad events"
id=$(jget "$T/got.json" "j['id']")
is "$(sqlite3 "$T/d/traces/$id.db" "SELECT name FROM devices WHERE key = 'pid:CPU functions'")" \
   "CPU functions" "the string pid \"CPU functions\" is a device"
done_testing
