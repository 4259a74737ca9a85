#!/usr/bin/env python3
"""Writes the seed corpus of realm_patch_fuzz (stdlib only).

Run from the repository root: python3 fuzz/make_realm_patch_corpus.py
Each seed is one patch in the format of docs/realms.md "Patches", encoded
with a fresh key table (as the patch log stores commits), plus a few
broken ones.
"""
import os
import struct

SET, DELETE, APPEND = 0, 1, 2


class Enc:
    def __init__(self):
        self.keys = {}

    def uint(self, v):
        if v < 0x80:
            return bytes([v])
        for code, fmt, top in ((0xCC, ">B", 0xFF), (0xCD, ">H", 0xFFFF),
                               (0xCE, ">I", 0xFFFFFFFF)):
            if v <= top:
                return bytes([code]) + struct.pack(fmt, v)
        return b"\xcf" + struct.pack(">Q", v)

    def int(self, v):
        if v >= 0:
            return self.uint(v)
        if v >= -32:
            return struct.pack(">b", v)
        for code, fmt, low in ((0xD0, ">b", -128), (0xD1, ">h", -32768),
                               (0xD2, ">i", -2**31)):
            if v >= low:
                return bytes([code]) + struct.pack(fmt, v)
        return b"\xd3" + struct.pack(">q", v)

    def header(self, n, fix, limit, b8, b16, b32):
        if n < limit:
            return bytes([fix | n])
        if b8 and n <= 0xFF:
            return bytes([b8, n])
        if n <= 0xFFFF:
            return bytes([b16]) + struct.pack(">H", n)
        return bytes([b32]) + struct.pack(">I", n)

    def str(self, s):
        b = s.encode()
        return self.header(len(b), 0xA0, 32, 0xD9, 0xDA, 0xDB) + b

    def key(self, k):
        if k in self.keys:
            return self.uint(self.keys[k])
        self.keys[k] = len(self.keys)
        return b"\x92" + self.uint(self.keys[k]) + self.str(k)

    def seg(self, s):
        return self.key(s) if isinstance(s, str) else self.int(-1 - s)

    def value(self, v):
        if v is None:
            return b"\xc0"
        if v is True:
            return b"\xc3"
        if v is False:
            return b"\xc2"
        if isinstance(v, int):
            return self.int(v)
        if isinstance(v, float):
            return b"\xcb" + struct.pack(">d", v)
        if isinstance(v, str):
            return self.str(v)
        if isinstance(v, list):
            return (self.header(len(v), 0x90, 16, 0, 0xDC, 0xDD) +
                    b"".join(self.value(e) for e in v))
        out = self.header(len(v), 0x80, 16, 0, 0xDE, 0xDF)
        for k in sorted(v):
            out += self.key(k) + self.value(v[k])
        return out

    def patch(self, ops):
        out = self.header(len(ops), 0x90, 16, 0, 0xDC, 0xDD)
        for op in ops:
            code, path = op[0], op[1]
            out += b"\x93" if code != DELETE else b"\x92"
            out += self.uint(code)
            out += self.header(len(path), 0x90, 16, 0, 0xDC, 0xDD)
            out += b"".join(self.seg(s) for s in path)
            if code != DELETE:
                out += self.value(op[2])
        return out


def patch(ops):
    return Enc().patch(ops)


SEEDS = {
    "empty": patch([]),
    "set_key": patch([(SET, ["a"], 1)]),
    "set_root": patch([(SET, [], {"players": {}, "round": 0})]),
    "players": patch([
        (SET, ["players", "p-1"], {"x": 1.5, "y": -2, "name": "Ann"}),
        (APPEND, ["players", "p-1", "items"], {"name": "sword", "x": 3}),
        (SET, ["players", "p-1", "x"], 2.25),
    ]),
    "lists": patch([
        (SET, ["l", 0], [1, [2, [3]], [], {}]),
        (DELETE, ["l", 3]),
        (APPEND, ["l"], None),
    ]),
    "numbers": patch([(SET, ["n"], [0, 127, 128, 65536, 2**64 - 1, -1, -33,
                                    -2**63, 1e300, "naïve ~/"])]),
    "escapes": patch([(DELETE, ["~0", "/", ""])]),
    "truncated": patch([(SET, ["players", "p-1"], {"x": 1})])[:-3],
    "unknown_id": b"\x91\x92\x01\x91\x05",
    "bad_announce": b"\x91\x92\x01\x91\x92\x03\xa1a",
    "huge_count": b"\x91\x93\x00\x90\xdd\xff\xff\xff\xff",
    "trailing": patch([(DELETE, ["a"])]) + b"\xc0",
}

# Two successive patches on one table, concatenated: the second sends ids.
_shared = Enc()
SEEDS["second_uses_ids"] = _shared.patch([(SET, ["a", "b"], {"a": 1})])
SEEDS["ids_only"] = _shared.patch([(SET, ["a", "b"], {"a": 2})])


def main():
    out = os.path.join("fuzz", "corpus", "realm_patch")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
