# SPDX-License-Identifier: MIT
# tests/json/oracle.py - an independent count of what a Chrome/Kineto JSON
# trace holds, written with Python's json module (not our parser), applying
# the binding rules of docs/json-ingest.md.  Prints one JSON object:
# slices, instants, counters, flows, bad_events, unmatched.
# Usage: python3 oracle.py FILE
import bisect, decimal, gzip, json, re, sys

NUM = re.compile(r'-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$')


def opener(path):
    with open(path, 'rb') as f:
        magic = f.read(2)
    return gzip.open(path, 'rt', encoding='utf-8') if magic == b'\x1f\x8b' else \
        open(path, encoding='utf-8')


def is_num(v):
    return isinstance(v, (int, decimal.Decimal)) and not isinstance(v, bool)


def to_ns(v):
    if isinstance(v, str):
        if not NUM.match(v):
            return None
        v = decimal.Decimal(v)
    elif not is_num(v):
        return None
    d = (decimal.Decimal(v) * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP)
    return int(d)


def text(v):
    if v is None:
        return ''
    return v if isinstance(v, str) else str(v)


def id_text(e):
    if 'id' in e and (is_num(e['id']) or isinstance(e['id'], str)):
        return text(e['id'])
    i2 = e.get('id2')
    if isinstance(i2, dict):
        for k in ('local', 'global'):
            if k in i2:
                return k + ':' + text(i2[k])
    return None


def main(path):
    with opener(path) as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc['traceEvents'] if isinstance(doc, dict) else doc
    c = dict(slices=0, instants=0, counters=0, flows=0, bad_events=0, unmatched=0)
    slices = {}         # unit -> [(ts, -end, seq)]
    flows = []          # (ident, ts, phase, order, bind, unit, seq)
    idents = {}
    open_b = {}         # unit -> stack of (ts, v2)
    open_a = {}         # key -> stack of (ts, name)
    open_x = []         # X without dur: (ts, v2, unit)
    seq = [0]
    max_end = [None]

    def bad():
        c['bad_events'] += 1

    def add(kind, unit, ts, dur=0):
        seq[0] += 1
        c[kind] += 1
        if max_end[0] is None or ts + dur > max_end[0]:
            max_end[0] = ts + dur
        if kind == 'slices':
            slices.setdefault(unit, []).append((ts, -(ts + dur), seq[0]))
        return seq[0]

    def ident(key):
        return idents.setdefault(key, len(idents))

    def v2(e):
        b = e.get('bind_id')
        fi, fo = e.get('flow_in') is True, e.get('flow_out') is True
        if not (is_num(b) or isinstance(b, str)) or not (fi or fo):
            return None
        return (ident(('v2', text(b))), 1 if fi and fo else 0 if fo else 2)

    for e in events:
        if not isinstance(e, dict):
            bad()
            continue
        ph = e.get('ph')
        if not isinstance(ph, str) or not ph:
            bad()
            continue
        if len(ph) != 1 or ph not in 'XBEiIRCbenSFstfM':
            continue
        pid, tid = e.get('pid'), e.get('tid')
        if any(x is not None and (isinstance(x, bool) or not (is_num(x) or isinstance(x, str)))
               for x in (pid, tid)) or ('pid' in e and pid is None) or ('tid' in e and tid is None):
            bad()
            continue
        for k in ('name', 'cat'):
            if k in e and not isinstance(e[k], str):
                break
        else:
            k = None
        if k:
            bad()
            continue
        if ph == 'M':
            continue
        if 'ts' not in e:
            bad()
            continue
        ts = to_ns(e['ts'])
        if ts is None:
            bad()
            continue
        unit = ('t', text(pid), text(tid))
        dev = text(pid)
        name, cat = e.get('name'), e.get('cat')
        if ph == 'X':
            if 'dur' not in e:      # still running when tracing stopped
                open_x.append((ts, v2(e), unit))
                continue
            dur = to_ns(e['dur'])
            if dur is None or dur < 0:
                bad()
                continue
            s = add('slices', unit, ts, dur)
            f = v2(e)
            if f:
                flows.append((f[0], ts, f[1], len(flows), 'direct', unit, s))
        elif ph == 'B':
            open_b.setdefault(unit, []).append((ts, v2(e)))
        elif ph == 'E':
            st = open_b.get(unit)
            if not st:
                c['unmatched'] += 1
            elif ts < st[-1][0]:
                bad()
            else:
                b, f = st.pop()
                s = add('slices', unit, b, ts - b)
                if f:
                    flows.append((f[0], b, f[1], len(flows), 'direct', unit, s))
        elif ph in 'iIR':
            add('instants', unit, ts)
        elif ph == 'C':
            a = e.get('args')
            if not isinstance(a, dict):
                bad()
                continue
            n = 0
            for v in a.values():
                if is_num(v) or (isinstance(v, str) and NUM.match(v)):
                    add('counters', unit, ts)
                    n += 1
            if not n:
                bad()
        elif ph in 'benSF':
            i = id_text(e)
            if i is None:
                bad()
                continue
            dep = ph in 'SF'
            key = ('S' if dep else 'b', dev, text(cat), i,
                   text(name) if dep else text(e.get('scope') if isinstance(e.get('scope'), str) else None))
            st = open_a.setdefault(key, [])
            if ph == 'n':
                add('instants', unit, ts)
            elif ph in 'bS':
                st.append((ts, name))
            elif not st:
                c['unmatched'] += 1
            else:
                j = len(st) - 1
                if ph == 'e' and name:
                    for k2 in range(len(st) - 1, -1, -1):
                        if st[k2][1] == name:
                            j = k2
                            break
                if ts < st[j][0]:
                    bad()
                    continue
                b = st.pop(j)[0]
                add('slices', ('a', dev, text(cat), text(name)), b, ts - b)
        else:  # s t f
            i = id_text(e)
            if i is None:
                bad()
                continue
            bind = 'enclosing'
            if ph == 'f' and e.get('bp') != 'e':
                bind = 'next'
            flows.append((ident((i, text(name), text(cat))), ts, 'stf'.index(ph), len(flows),
                          bind, unit, None))
    for unit, st in open_b.items():
        while st:
            b, f = st.pop()
            c['unmatched'] += 1
            s = add('slices', unit, b, max(max_end[0] - b, 0))
            if f:
                flows.append((f[0], b, f[1], len(flows), 'direct', unit, s))
    for key, st in open_a.items():
        while st:
            b, name = st.pop()
            c['unmatched'] += 1
            add('slices', ('a', key[1], key[2], text(name)), b, max(max_end[0] - b, 0))
    while open_x:
        b, f, unit = open_x.pop()
        c['unmatched'] += 1
        s = add('slices', unit, b, max(max_end[0] - b, 0))
        if f:
            flows.append((f[0], b, f[1], len(flows), 'direct', unit, s))
    if c['slices'] + c['instants'] + c['counters'] == 0:
        print(json.dumps({'error': 'no timed events'}))
        return
    for u in slices:
        slices[u].sort()
    keys = {u: [x[0] for x in v] for u, v in slices.items()}

    def bind(fl):
        _, t, _, _, how, unit, s = fl
        if how == 'direct':
            return s
        sl = slices.get(unit, [])
        if how == 'next':
            i = bisect.bisect_left(keys.get(unit, []), t)
            return sl[i][2] if i < len(sl) else -1
        # enclosing: the latest-starting slice that contains t
        i = bisect.bisect_right(keys.get(unit, []), t) - 1
        while i >= 0:
            if sl[i][0] <= t <= -sl[i][1]:
                return sl[i][2]
            i -= 1
        return -1

    bound = sorted((f[0], f[1], f[2], f[3], bind(f)) for f in flows)
    prev, opened, last = -1, False, None
    for idn, t, phase, order, s in bound:
        if idn != last:
            if opened:
                c['unmatched'] += 1
            opened = False
            last = idn
        if phase == 0:
            if opened:
                c['unmatched'] += 1
            opened, prev = True, s
            continue
        if not opened:
            c['unmatched'] += 1
            continue
        if prev > 0 and s > 0:
            if prev != s:
                c['flows'] += 1
        else:
            c['unmatched'] += 1
        prev = s
        if phase == 2:
            opened = False
    if opened:
        c['unmatched'] += 1
    print(json.dumps(c))


main(sys.argv[1])
