#!/usr/bin/env python3
"""Writes the seed corpus of input_log_fuzz (fuzz/corpus/input_log/): input
log segments as src/shard/input_log_format.h lays them out: a run, saves,
ticks with inputs (one with a rewind), a failed tick, and torn tails."""
import os
import struct

MAGIC = b"TSRILOG1"


def fnv64(data):
    h = 14695981039346656037
    for b in data:
        h ^= b
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def text(b):
    if isinstance(b, str):
        b = b.encode()
    return varint(len(b)) + b


def frame(body):
    length = struct.pack("<I", len(body))
    return length + struct.pack("<I", fnv64(length + body) & 0xFFFFFFFF) + body


def run(run_id, kind="counter", version="0123456789ab", params=b"\x81\xa5start\x05",
        restored=False):
    return frame(bytes([1]) + varint(run_id) + text(kind) + text(version) +
                 text(params) + bytes([1 if restored else 0]))


def save(tick, state):
    return frame(bytes([2]) + varint(tick) + text(state))


def tick(n, inputs=(), stop=0, message="", flags=1, fuel=1234):
    body = bytes([3]) + varint(n) + varint(50000) + varint(fuel) + bytes([flags])
    body += struct.pack("<Q", fnv64(b"snap%d" % n)) + bytes([stop]) + text(message)
    body += varint(len(inputs))
    for sub, seq, payload, rewind in inputs:
        body += text(sub) + varint(seq) + text(payload)
        body += bytes([1]) + text(rewind) if rewind is not None else bytes([0])
    return frame(body)


def main():
    out = os.path.join(os.path.dirname(__file__), "corpus", "input_log")
    os.makedirs(out, exist_ok=True)
    add = b"\x81\xa3add\x81\xa1n\x01"
    whole = (MAGIC + run(7) + tick(1, [("alice", 1, add, None)]) +
             save(1, b"state") +
             tick(2, [("alice", 2, add, None), ("bob", 3, add, b"rw")]) +
             tick(3, stop=4, message="panic: boom at tick 3", flags=3))
    files = {
        "segment": whole,
        "restored": MAGIC + run(8, restored=True) + save(0, b"s") + tick(1),
        "torn": whole[:-5],
        "bad_checksum": whole[:-1] + bytes([whole[-1] ^ 1]),
        "no_header": MAGIC + tick(1),
        "empty_segment": MAGIC,
        "not_a_segment": b"hello",
    }
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
