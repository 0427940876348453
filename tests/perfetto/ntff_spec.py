# SPDX-License-Identifier: MIT
"""tests/perfetto/ntff_spec.py - an .ntff reader and writer written from
schemas/ntff.md alone (no code of ingest/ntff.c), so that the test beside it
can check that the page is enough to read what neuron-explorer writes and to
write what it reads.

  ntff_spec.py ls FILE            one JSON object per listed section, then one
                                  {"stop": ...} line: why the walk stopped
                                  (null at the end of the file)
  ntff_spec.py cat FILE NAME      the payload of the first section NAME
  ntff_spec.py damage IN OUT HOW  a copy of IN damaged as HOW says (see
                                  DAMAGE), headers rewritten with good CRCs
                                  where HOW says so
  ntff_spec.py make OUT PFTRACE JSON [--incomplete]
                                  a run of five sections and a manifest (see
                                  make()); --incomplete adds a section whose
                                  writer died before it rewrote its header
"""
import gzip
import json
import struct
import sys
import zlib

MAGIC = b'\x8aNTF\r\n\x1a\n'
SEC_MAGIC = b'NTSC'
ONES = 0xFFFFFFFFFFFFFFFF
F_ZLIB = 0x1
HDR = struct.Struct('<4sHHIQQIII')	# magic kind flags name_len stored raw crc reserved hcrc


def crc32(b):
    return zlib.crc32(b) & 0xFFFFFFFF


def payload_status(sec, payload):
    """The verdict on a section whose header is fine (the spec's second table)."""
    if crc32(payload) != sec['crc']:
        return 'bad-crc'
    if sec['flags'] & F_ZLIB:
        d = zlib.decompressobj()
        try:
            raw = d.decompress(payload) + d.flush()
        except zlib.error:
            return 'bad-data'
        if not d.eof:
            return 'bad-data'
        return 'ok' if len(raw) == sec['raw'] else 'bad-data'
    return 'ok' if sec['raw'] == sec['stored'] else 'bad-data'


def walk(data):
    """(sections, stop): the sections listed, and (verdict, offset) or None."""
    if len(data) < 16 or data[:8] != MAGIC:
        raise SystemExit('not an .ntff file')
    major, _minor = struct.unpack_from('<HH', data, 8)
    if major != 1:
        raise SystemExit('unknown major version %d' % major)
    secs, off, stop = [], 16, None
    while off < len(data):
        if len(data) - off < HDR.size:
            stop = ('truncated header', off)
            break
        magic, kind, flags, nlen, stored, raw, crc, _res, hcrc = HDR.unpack_from(data, off)
        if magic != SEC_MAGIC or nlen == 0 or nlen > 4096:
            stop = ('corrupt header', off)
            break
        if off + HDR.size + nlen > len(data):
            stop = ('truncated header', off)
            break
        name = data[off + HDR.size:off + HDR.size + nlen]
        if crc32(data[off:off + 36] + name) != hcrc:
            stop = ('corrupt header', off)
            break
        sec = {'index': len(secs), 'offset': off, 'kind_id': kind, 'flags': flags,
               'compressed': bool(flags & F_ZLIB), 'stored': stored, 'raw': raw,
               'crc32': '%08x' % crc, 'crc': crc,
               'name': name.decode('utf-8', 'replace')}
        secs.append(sec)
        start = off + HDR.size + nlen
        if stored == ONES:
            sec['status'] = 'incomplete'
            stop = ('incomplete', off)
            break
        if start + stored > len(data):
            sec['status'] = 'truncated'
            stop = ('truncated', off)
            break
        sec['payload'] = data[start:start + stored]
        sec['status'] = payload_status(sec, sec['payload'])
        off = start + stored
    return secs, stop


def payload(sec):
    p = sec['payload']
    return zlib.decompress(p) if sec['flags'] & F_ZLIB else p


def header(kind, flags, name, stored, raw, crc):
    h = HDR.pack(SEC_MAGIC, kind, flags, len(name), stored, raw, crc, 0, 0)[:36]
    return h + struct.pack('<I', crc32(h + name))


def section(kind, name, data, compress):
    """A section written from memory."""
    name = name.encode()
    stored = zlib.compress(data) if compress else data
    return (header(kind, F_ZLIB if compress else 0, name, len(stored), len(data), crc32(stored))
            + name + stored)


def stream_section(f, kind, name, chunks, finish=True):
    """A section written while compressing on the fly: lengths all-ones
    first, the header rewritten at the end (unless the writer 'dies')."""
    name = name.encode()
    at = f.tell()
    f.write(header(kind, F_ZLIB, name, ONES, ONES, 0) + name)
    f.flush()
    c, stored, raw, crc = zlib.compressobj(), 0, 0, 0
    for ch in chunks:
        out = c.compress(ch)
        raw += len(ch)
        stored += len(out)
        crc = zlib.crc32(out, crc)
        f.write(out)
        f.flush()
        if not finish:
            return	# killed halfway: the header still says incomplete
    out = c.flush()
    stored += len(out)
    crc = zlib.crc32(out, crc) & 0xFFFFFFFF
    f.write(out)
    end = f.tell()
    f.seek(at)
    f.write(header(kind, F_ZLIB, name, stored, raw, crc))
    f.seek(end)
    f.flush()


def rewrite(data, sec, **fields):
    """@data with section @sec's header rewritten (its CRC recomputed)."""
    v = dict(kind=sec['kind_id'], flags=sec['flags'], stored=sec['stored'], raw=sec['raw'],
             crc=sec['crc'])
    v.update(fields)
    name = sec['name'].encode()
    h = header(v['kind'], v['flags'], name, v['stored'], v['raw'], v['crc'])
    return data[:sec['offset']] + h + data[sec['offset'] + HDR.size:]


def damage(data, how):
    """The damaged copies the test checks verdicts on (sections 0 and 1)."""
    secs, _ = walk(data)
    s0, s1 = secs[0], secs[1]
    p0 = s0['offset'] + HDR.size + len(s0['name'].encode())	# section 0's payload
    if how == 'flip-payload':	# bad-crc
        return data[:p0 + 5] + bytes([data[p0 + 5] ^ 0xFF]) + data[p0 + 6:]
    if how == 'cut-payload':	# truncated (listed)
        return data[:p0 + s0['stored'] // 2]
    if how == 'cut-name':	# the file ends inside section 1's name: not listed
        return data[:s1['offset'] + HDR.size + 3]
    if how == 'cut-header':	# fewer than 40 bytes left for section 1's header
        return data[:s1['offset'] + 20]
    if how == 'flip-length':	# section 1's stored_len changed: its header CRC fails
        at = s1['offset'] + 12
        return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]
    if how == 'bad-zlib':	# section 0's stream damaged, its CRC made to match
        bad = bytearray(s0['payload'])
        for i in range(2, len(bad) - 4):
            bad[i] ^= 0x55
        bad = bytes(bad)
        return rewrite(data[:p0] + bad + data[p0 + len(bad):], s0, crc=crc32(bad))
    if how == 'raw-len':	# section 0 says one byte more than it inflates to
        return rewrite(data, s0, raw=s0['raw'] + 1)
    raise SystemExit('unknown damage ' + how)


def make(out, pftrace, jsontrace, incomplete):
    """Perfetto (zlib, streamed), JSON (gzip'd, stored as is), an attachment,
    a section of a kind this version does not define (99), then the
    manifest: the framework layer's clock offset is 5000 ns."""
    pf = open(pftrace, 'rb').read()
    js = gzip.compress(open(jsontrace, 'rb').read())
    with open(out, 'wb') as f:
        f.write(MAGIC + struct.pack('<HHI', 1, 0, 0))
        stream_section(f, 2, 'kernel/trace.pftrace', [pf[:100], pf[100:]])
        f.write(section(3, 'framework/trace.json.gz', js, False))
        f.write(section(4, 'neuron/notes.txt', b'kept, not parsed\n' * 50, True))
        f.write(section(99, 'future/unknown.bin', b'\x00\x01\x02', False))
        manifest = {
            'format': 'ntff_spec.py', 'format_version': 1,
            'layers': {'framework': {'clock_offset_ns': 5000}, 'kernel': {}},
            'sections': [
                {'name': 'kernel/trace.pftrace', 'kind': 2, 'layer': 'kernel', 'size': len(pf)},
                {'name': 'framework/trace.json.gz', 'kind': 'json', 'layer': 'framework'},
            ],
        }
        f.write(section(1, 'manifest.json', json.dumps(manifest).encode(), False))
        if incomplete:
            stream_section(f, 2, 'kernel/late.pftrace', [pf, pf], finish=False)


def main(argv):
    if len(argv) >= 3 and argv[1] == 'ls':
        secs, stop = walk(open(argv[2], 'rb').read())
        keys = ('index', 'kind_id', 'compressed', 'offset', 'stored', 'raw', 'crc32',
                'status', 'name')
        for s in secs:
            print(json.dumps({k: s[k] for k in keys}))
        print(json.dumps({'stop': list(stop) if stop else None}))
        return 0
    if len(argv) == 4 and argv[1] == 'cat':
        secs, _ = walk(open(argv[2], 'rb').read())
        for s in secs:
            if s['name'] == argv[3] and s['status'] == 'ok':
                sys.stdout.buffer.write(payload(s))
                return 0
        return 1
    if len(argv) == 5 and argv[1] == 'damage':
        open(argv[3], 'wb').write(damage(open(argv[2], 'rb').read(), argv[4]))
        return 0
    if len(argv) in (5, 6) and argv[1] == 'make':
        make(argv[2], argv[3], argv[4], argv[5:] == ['--incomplete'])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
