#!/usr/bin/env python3
"""Writes the seed corpus of talk_abi_fuzz (stdlib only).

Run from the repository root: python3 fuzz/make_talk_abi_corpus.py
The first byte picks the layout (talk_abi_fuzz.cc): 0 tessera_transfer_requests,
1 tessera_groups, 2 tessera_outbox, 3 the host's encoders.
"""
import os
import struct


def s(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack("<I", len(b)) + b


def requests(*items):
    return b"\x00" + struct.pack("<I", len(items)) + b"".join(
        s(sid) + s(to) for sid, to in items)


def groups(*names):
    return b"\x01" + struct.pack("<I", len(names)) + b"".join(
        s(n) for n in names)


def outbox(*items):
    return b"\x02" + struct.pack("<I", len(items)) + b"".join(
        bytes([kind]) + s(to) + s(topic) + s(data)
        for kind, to, topic, data in items)


SEEDS = {
    "requests_two": requests(("alice", "zone-1"), ("bob", "")),
    "requests_empty": requests(),
    "requests_count_lies": b"\x00" + struct.pack("<I", 1000) + s("a"),
    "requests_cut": requests(("alice", "zone-1"))[:-3],
    "requests_trailing": requests(("a", "b")) + b"\x00",
    "groups_two": groups("world", "north"),
    "groups_long": groups("g" * 200, ""),
    "groups_len_past_end": b"\x01" + struct.pack("<II", 1, 50) + b"abc",
    "outbox_each_kind": outbox((0, "zone-1", "hi", "one"),
                               (1, "world", "relic_taken", ""),
                               (2, "", "t", b"\x00\xff")),
    "outbox_bad_kind": outbox((3, "z", "t", "d")),
    "outbox_all_named": outbox((2, "z", "t", "d")),
    "outbox_short": b"\x02\x01\x00",
    "encoders": b"\x03" + b"\x05alice\x06zone-0\x02{}\x03\x00\x01\x02"
                + b"\x01x\x01y",
}


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus",
                        "talk_abi")
    os.makedirs(root, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
