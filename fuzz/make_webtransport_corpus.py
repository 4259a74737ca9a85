#!/usr/bin/env python3
"""Writes the seed corpus of webtransport_fuzz (fuzz/corpus/webtransport).

The first byte of each seed picks the parser (0 varints, 1 TLVs, 2 stream
and datagram prefixes, 3 the request stream, 4 tick datagrams)."""
import os

def varint(v):
    if v < 64: return bytes([v])
    if v < 16384: return (v | 0x4000).to_bytes(2, 'big')
    if v < 2**30: return (v | 0x80000000).to_bytes(4, 'big')
    return (v | 0xc000000000000000).to_bytes(8, 'big')

def tlv(t, payload):
    return varint(t) + varint(len(payload)) + payload

def literal(name, value):
    n = name.encode(); v = value.encode()
    head = bytes([0x20 | len(n)]) if len(n) < 7 else bytes([0x27, len(n) - 7])
    return head + n + bytes([len(v)]) + v

settings = b''.join(varint(k) + varint(v) for k, v in
                    [(0x33, 1), (0x2b603742, 1), (0x08, 1), (0xc671706a, 4)])
close = tlv(0x2843, (4001).to_bytes(4, 'big') + b'ticket invalid')
block = b'\x00\x00' + literal(':method', 'CONNECT') + \
    literal(':protocol', 'webtransport') + literal(':path', '/shard/a')
request = tlv(1, block) + tlv(0x21, b'grease') + tlv(0, tlv(0x17, b'?') + close)

def tick(t, count, index, chunk):
    d = varint(t) + varint(count) + varint(index) + chunk
    return bytes([len(d)]) + d

seeds = {
    'varints': b'\x00' + varint(37) + varint(15293) + varint(494878333) + varint(2**62 - 1),
    'settings': b'\x01' + tlv(4, settings),
    'close': b'\x01' + close,
    'prefixes': b'\x02' + varint(0x41) + varint(4) + b'data',
    'request': b'\x03' + request,
    'ticks': b'\x04' + tick(5, 2, 1, b'world') + tick(5, 2, 0, b'hello ') + tick(6, 1, 0, b'x'),
}
out = os.path.join(os.path.dirname(__file__), 'corpus', 'webtransport')
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)
