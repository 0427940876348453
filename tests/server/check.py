#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# tests/server/check.py - independent checks of server answers against the
# Chrome JSON trace itself (read with Python's json module, gzip'd or not).
# Exit 0 when the answer matches, 1 with a message otherwise.
#   check.py counts TRACE.json ANSWER.json          slices/instants/counters
#   check.py timeline TRACE.json ANSWER.json        events-mode windows
#   check.py search TRACE.json ANSWER.json Q        total + ordering
#   check.py summary TRACE.json ANSWER.json S E     per-name count/total/max (X only)
import gzip, json, sys

def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    op = gzip.open if head == b"\x1f\x8b" else open
    with op(path, "rt", encoding="utf-8") as f:
        j = json.load(f)
    return j["traceEvents"] if isinstance(j, dict) else j

def ns(x):
    return int(round(float(x) * 1000))

def slices(evs):
    return [e for e in evs if e.get("ph") == "X"]

def fail(msg):
    print(msg)
    sys.exit(1)

def main():
    cmd, trace, ans = sys.argv[1], sys.argv[2], sys.argv[3]
    evs = load(trace)
    a = json.load(open(ans))
    if cmd == "counts":
        x = len(slices(evs))
        i = sum(1 for e in evs if e.get("ph") in ("i", "I", "n"))
        c = sum(len(e.get("args", {})) for e in evs if e.get("ph") == "C")
        got = (a["slices"], a["instants"], a["counters"])
        if got != (x, i, c):
            fail("counts %r, trace has %r" % (got, (x, i, c)))
    elif cmd == "timeline":
        s, e = a["start"], a["end"]
        want = sorted((d["name"], ns(d["ts"]), ns(d["dur"])) for d in slices(evs)
                      if ns(d["ts"]) < e and ns(d["ts"]) + ns(d["dur"]) > s)
        got = []
        for u in a["units"]:
            if u["mode"] != "events":
                fail("unit %d answered with buckets" % u["id"])
            got += [(v["name"], v["ts"], v["dur"]) for v in u["events"] if v["kind"] == "slice"]
        if sorted(got) != want:
            fail("timeline slices differ:\n got  %r\n want %r" % (sorted(got), want))
    elif cmd == "search":
        q = sys.argv[4].lower()
        want = sorted(ns(d["ts"]) for d in evs if d.get("ph") in ("X", "i", "I")
                      and q in d.get("name", "").lower())
        if a["total"] != len(want):
            fail("search total %d, trace has %d" % (a["total"], len(want)))
        ts = [m["ts"] for m in a["matches"]]
        if ts != want[:len(ts)]:
            fail("search order %r, want %r" % (ts, want[:len(ts)]))
    elif cmd == "summary":
        s, e = int(sys.argv[4]), int(sys.argv[5])
        agg = {}
        for d in slices(evs):
            t, du = ns(d["ts"]), ns(d["dur"])
            if t < e and (t + du > s or t >= s):
                c = agg.setdefault(d["name"], [0, 0, 0])
                c[0] += 1; c[1] += du; c[2] = max(c[2], du)
        got = {r["name"]: [r["count"], r["total_ns"], r["max_ns"]] for r in a["rows"]
               if r["name"] in agg or r["total_ns"] > 0}
        if got != agg:
            fail("summary differs:\n got  %r\n want %r" % (got, agg))
        tot = [r["total_ns"] for r in a["rows"]]
        if tot != sorted(tot, reverse=True):
            fail("summary not sorted by total_ns desc")
    else:
        fail("unknown check " + cmd)

main()
