#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# tests/server/gen-trace.py - write a synthetic Chrome JSON trace of about N
# events: T threads of nested X slices (3 levels) plus a counter, so the
# server tests and bench/server-bench.sh have a large trace on demand.
# usage: gen-trace.py N OUT [THREADS]
import json, random, sys

n = int(sys.argv[1])
out = sys.argv[2]
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 8
rnd = random.Random(42)
names = ["matmul", "conv2d", "relu", "softmax", "allreduce", "dma_copy", "layernorm",
         "attention", "gelu", "embedding"]
per = max(1, n // threads)
with open(out, "w") as f:
    f.write('{"traceEvents":[\n')
    first = True
    for tid in range(threads):
        ts = 0.0
        k = 0
        while k < per:
            # one top slice with 2 children, each with 1 grandchild: 5 events
            d = 50.0
            evs = [(ts, d, 0), (ts + 1, 20, 1), (ts + 2, 10, 2), (ts + 25, 20, 1), (ts + 26, 10, 2)]
            for (t, du, lvl) in evs:
                nm = names[(k + lvl + tid) % len(names)]
                f.write(('' if first else ',\n') + json.dumps(
                    {"ph": "X", "name": nm, "cat": "op", "pid": 1, "tid": tid, "ts": t, "dur": du}))
                first = False
                k += 1
            ts += 60 + rnd.randint(0, 10)
    for i in range(0, max(1, n // 100)):
        f.write(',\n' + json.dumps({"ph": "C", "name": "mem", "pid": 1, "ts": i * 100.0,
                                    "args": {"bytes": rnd.randint(0, 1 << 20)}}))
    f.write('\n]}\n')
