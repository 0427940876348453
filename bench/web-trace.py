#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# bench/web-trace.py N OUT - write a synthetic Chrome JSON trace of about N events for the web
# benchmark: 2 GPUs x 4 streams of kernels, 4 host threads with 3-deep nesting, a flow from every
# 50th launch to its kernel, and a counter. Deterministic; streams the output.
import sys

n, out = int(sys.argv[1]), sys.argv[2]
with open(out, 'w') as f:
    w = f.write
    w('{"traceEvents":[\n')
    w('{"ph":"M","pid":1,"tid":0,"name":"process_name","args":{"name":"train.py"}},\n')
    w('{"ph":"M","pid":100,"tid":0,"name":"process_name","args":{"name":"GPU 0"}},\n')
    w('{"ph":"M","pid":101,"tid":0,"name":"process_name","args":{"name":"GPU 1"}}')
    names = ['gemm_%d' % i for i in range(24)] + ['allreduce', 'softmax', 'layernorm', 'memcpy']
    ops = ['aten::linear', 'aten::matmul', 'aten::add', 'aten::softmax', 'aten::layer_norm']
    i = 0
    k = 0
    t = 1000.0
    while i < n:
        # host: one op with a child and a launch (3 events) on one of 4 threads
        tid = 10 + (k % 4)
        ts = t + (k % 4) * 0.25
        w(',\n{"ph":"X","pid":1,"tid":%d,"ts":%.3f,"dur":1.900,"name":"%s","cat":"cpu_op"}' % (tid, ts, ops[k % 5]))
        w(',\n{"ph":"X","pid":1,"tid":%d,"ts":%.3f,"dur":1.200,"name":"aten::mm","cat":"cpu_op"}' % (tid, ts + 0.2))
        w(',\n{"ph":"X","pid":1,"tid":%d,"ts":%.3f,"dur":0.500,"name":"cudaLaunchKernel","cat":"cuda_runtime"}' % (tid, ts + 0.4))
        pid = 100 + (k % 2)
        st = 7 + (k // 2) % 4
        kts = ts + 1.0
        w(',\n{"ph":"X","pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f,"name":"%s","cat":"kernel"}' % (pid, st, kts, 0.6 + (k % 7) * 0.1, names[k % len(names)]))
        i += 4
        if k % 50 == 0:
            w(',\n{"ph":"s","pid":1,"tid":%d,"ts":%.3f,"id":%d,"name":"ac2g","cat":"ac2g"}' % (tid, ts + 0.4, k))
            w(',\n{"ph":"f","bp":"e","pid":%d,"tid":%d,"ts":%.3f,"id":%d,"name":"ac2g","cat":"ac2g"}' % (pid, st, kts, k))
        if k % 20 == 0:
            w(',\n{"ph":"C","pid":1,"tid":0,"ts":%.3f,"name":"memory","args":{"allocated":%d}}' % (ts, (k * 7919) % 100000))
            i += 1
        k += 1
        t += 0.5
    w('\n]}\n')
