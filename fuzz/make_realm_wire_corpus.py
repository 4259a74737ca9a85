#!/usr/bin/env python3
"""Writes the seed corpus of realm_wire_fuzz (stdlib only).

Run from the repository root: python3 fuzz/make_realm_wire_corpus.py
Each seed is one realm protocol message (docs/protocol.md "Realms
(tessera.realm.v1)"): the client messages with real patches inside
(fuzz/make_realm_patch_corpus.py's encoder), the server messages, wider
integer forms, trailing elements, and a few broken ones.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_realm_patch_corpus import APPEND, DELETE, SET, Enc  # noqa: E402

E = Enc()


def array(*items):
    return E.header(len(items), 0x90, 16, 0, 0xDC, 0xDD) + b"".join(items)


def u(v):
    return E.uint(v)


def s(text):
    return E.str(text)


def bin_(data):
    n = len(data)
    if n <= 0xFF:
        return bytes([0xC4, n]) + data
    if n <= 0xFFFF:
        return b"\xc5" + struct.pack(">H", n) + data
    return b"\xc6" + struct.pack(">I", n) + data


def limits(entries):
    out = E.header(len(entries), 0x80, 16, 0, 0xDE, 0xDF)
    for key in sorted(entries):
        out += s(key) + E.int(entries[key])
    return out


def patch(ops):
    return Enc().patch(ops)


HELLO, WRITE, PING, PONG = 1, 2, 3, 4
HYDRATE, RESUME, COMMIT, ACK, REJECT, COMMITS = 16, 17, 18, 19, 20, 21
NIL = b"\xc0"
MAX = 2**53
LIMITS = {"maxPatchesPerFrame": 64, "maxFrameBytes": 65536,
          "maxRecordKeyLength": 128, "maxExpandedLeaves": 256,
          "writeRatePerSecond": 100, "writeRateBurst": 200}
PLAYERS = patch([
    (SET, ["players", "p-1"], {"x": 1.5, "y": -2, "name": "Ann"}),
    (APPEND, ["players", "p-1", "items"], {"name": "sword", "x": 3}),
    (DELETE, ["players", "p-0"]),
])
STATE = patch([(SET, [], {"players": {}, "round": 0})])

SEEDS = {
    "hello": array(u(HELLO), u(1), s("v1.eyJrIjoicmVhbG0ifQ.c2ln"), u(0),
                   u(0)),
    "hello_resume": array(u(HELLO), u(1), s("t\u00e9"), u(3), u(MAX)),
    "write_set": array(u(WRITE), u(1), bin_(patch([(SET, ["a"], 1)]))),
    "write_players": array(u(WRITE), u(70000), bin_(PLAYERS)),
    "write_bad_patch": array(u(WRITE), u(2), bin_(b"\x91\x92\x01\x91\x05")),
    "ping": array(u(PING), u(7)),
    "pong": array(u(PONG), u(MAX)),
    # array16, type as int64, seq as uint64, patch as bin32.
    "write_wide": (b"\xdc\x00\x03" + b"\xd3" + struct.pack(">q", WRITE) +
                   b"\xcf" + struct.pack(">Q", 5) + b"\xc6" +
                   struct.pack(">I", 1) + b"\x90"),
    "trailing": array(u(PING), u(1), limits({"x": -1}), array(array()),
                      b"\xd4\x01\x00", bin_(b"ab")),
    "hydrate": array(u(HYDRATE), u(1), u(9), s("ann"), limits(LIMITS),
                     bin_(STATE)),
    "resume": array(u(RESUME), u(1), u(4), u(9), s("ann"), limits(LIMITS)),
    "commit": array(u(COMMIT), u(10), bin_(PLAYERS)),
    "commit_seq": array(u(COMMIT), u(11), bin_(patch([(DELETE, ["a"])])),
                        u(3)),
    "ack": array(u(ACK), u(3), u(12)),
    "hello_flags": array(u(HELLO), u(1), s("t"), u(2), u(5), u(1)),
    "commits": array(u(COMMITS), array(
        array(u(13), bin_(PLAYERS)),
        array(u(14), NIL, u(5)),
        array(u(15), bin_(patch([(DELETE, ["a"])])), u(6)),
        array(u(MAX), bin_(STATE)))),
    "commits_trailing": array(u(COMMITS), array(
        array(u(1), bin_(b"\x90"), u(2), s("x")), array(u(3), NIL, u(4),
                                                       NIL)), s("later")),
    "commits_ack_no_seq": array(u(COMMITS), array(array(u(1), NIL))),
    "commits_not_increasing": array(u(COMMITS), array(
        array(u(2), bin_(b"\x90")), array(u(2), bin_(b"\x90")))),
    "reject": array(u(REJECT), u(4), s("permission_denied"), s("no")),
    # Broken.
    "empty_array": b"\x90",
    "unknown_type": array(u(9)),
    "text_patch": array(u(WRITE), u(1), s("[]")),
    "bad_utf8": array(u(HELLO), u(1), b"\xa2\xc3\x28", u(0), u(0)),
    "seq_too_big": array(u(WRITE), u(MAX + 1), bin_(b"\x90")),
    "huge_bin": b"\x93" + u(WRITE) + u(1) + b"\xc6\xff\xff\xff\xff\x90",
    "huge_array": b"\xdd\xff\xff\xff\xff\x03\x01",
    "truncated": array(u(HELLO), u(1), s("ticket"), u(0), u(0))[:-3],
    "trailing_bytes": array(u(PING), u(1)) + b"\xc0",
}


def main():
    out = os.path.join("fuzz", "corpus", "realm_wire")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
