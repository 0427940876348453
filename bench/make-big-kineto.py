#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# bench/make-big-kineto.py SRC OUT MB - replicate the events of a Kineto/Chrome
# JSON trace (gzip'd or not) with shifted timestamps until OUT holds at least
# MB*1e6 bytes (default cap 990 MB: the most sqlite3's readfile() holds).
# Flow ids are offset per copy so flows stay distinct.
import gzip, json, sys

src, out, mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
op = gzip.open if open(src, 'rb').read(2) == b'\x1f\x8b' else open
with op(src, 'rt') as f:
    doc = json.load(f)
events = doc['traceEvents'] if isinstance(doc, dict) else doc
ts = [float(e['ts']) for e in events if isinstance(e.get('ts'), (int, float))]
span = (max(ts) - min(ts)) + 1000.0 if ts else 1000.0
target = int(mb * 1e6)
with open(out, 'w') as f:
    f.write('{"traceEvents":[\n')
    size, copy, first = 0, 0, True
    while size < target:
        shift = copy * span
        chunk = []
        for e in events:
            if copy and e.get('ph') == 'M':
                continue
            e2 = dict(e)
            if isinstance(e2.get('ts'), (int, float)):
                e2['ts'] = round(e2['ts'] + shift, 3)
            if 'id' in e2 and isinstance(e2['id'], int):
                e2['id'] = e2['id'] + copy * 10000000
            chunk.append(json.dumps(e2, separators=(',', ':')))
        text = (',\n' if not first else '') + ',\n'.join(chunk)
        first = False
        if size + len(text) > target and copy > 0 and mb <= 990:
            break
        f.write(text)
        size += len(text)
        copy += 1
    f.write('\n],"traceName":"replicated x%d"}\n' % copy)
print(copy)
