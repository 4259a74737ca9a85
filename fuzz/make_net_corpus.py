#!/usr/bin/env python3
"""Writes the seed corpora of frame_fuzz and ticket_fuzz (stdlib only).

Run from the repository root: python3 fuzz/make_net_corpus.py
The ticket seeds are signed with ticket_fuzz.cc's secret and expire after
its fixed clock, so the valid ones verify there.
"""
import base64
import hashlib
import hmac
import json
import os
import struct

SECRET = b"fuzz-secret"
NOW = 1700000000


def pack(v):
    """A minimal MessagePack encoder (smallest encodings; bytes are bin)."""
    if v is None:
        return b"\xc0"
    if v is True or v is False:
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        if 0 <= v <= 0x7F:
            return bytes([v])
        if -32 <= v < 0:
            return struct.pack(">b", v)
        for fmt, tag in ((">B", 0xCC), (">H", 0xCD), (">I", 0xCE), (">Q", 0xCF)):
            if v >= 0:
                try:
                    return bytes([tag]) + struct.pack(fmt, v)
                except struct.error:
                    continue
        for fmt, tag in ((">b", 0xD0), (">h", 0xD1), (">i", 0xD2), (">q", 0xD3)):
            try:
                return bytes([tag]) + struct.pack(fmt, v)
            except struct.error:
                continue
    if isinstance(v, float):
        return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        b = v.encode()
        if len(b) < 32:
            return bytes([0xA0 | len(b)]) + b
        if len(b) < 256:
            return b"\xd9" + bytes([len(b)]) + b
        return b"\xda" + struct.pack(">H", len(b)) + b
    if isinstance(v, bytes):
        if len(v) < 256:
            return b"\xc4" + bytes([len(v)]) + v
        return b"\xc5" + struct.pack(">H", len(v)) + v
    if isinstance(v, list):
        assert len(v) < 16
        return bytes([0x90 | len(v)]) + b"".join(pack(x) for x in v)
    if isinstance(v, dict):
        assert len(v) < 16
        return bytes([0x80 | len(v)]) + b"".join(
            pack(k) + pack(x) for k, x in v.items())
    raise TypeError(v)


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign(payload_part, secret=SECRET):
    text = "v1." + payload_part
    mac = hmac.new(secret, text.encode(), hashlib.sha256).digest()
    return text + "." + b64(mac)


def ticket(claims, secret=SECRET):
    return sign(b64(json.dumps(claims, separators=(",", ":")).encode()), secret)


FRAMES = {
    # Valid client messages.
    "hello": pack([1, 1, "v1.eyJzIjoiYSJ9.c2ln"]),
    "hello_v2": pack([1, 2, "t"]),
    "hello_flags": pack([1, 1, "t", 1]),
    "hello_unknown_flags": pack([1, 1, "t", 0xFF]),
    "input": pack([2, 1, b"\x81\xa1x\x05", 10]),
    "input_nil_view": pack([2, 2, b"{}", None]),
    "input_no_view": pack([2, 3, b""]),
    "input_wide_ints": b"\x94\xcd\x00\x02\xcf" + b"\x00" * 7 + b"\x05"
                       + b"\xc4\x01x\xd1\x00\x09",
    "input_extra": pack([2, 4, b"p", 7, "ext", [1, {"k": None}]]),
    # Fractional view ticks (float64, float32) and an integral float64.
    "input_float_view": pack([2, 5, b"p", 12.25]),
    "input_float32_view": b"\x94\x02\x06\xc4\x01p\xca\x40\x20\x00\x00",
    "input_integral_float_view": pack([2, 7, b"p", 40.0]),
    "ping": pack([3, 123456789]),
    "pong": pack([4, 2**64 - 1]),
    # Valid server messages.
    "welcome": pack([16, "arena-1", "alice", 20, "msgpack", 99]),
    "ack": pack([17, 5]),
    "reject": pack([18, 6, "outside the arena"]),
    "frame": pack([19, 100, 5, b"\x82\xa1x\x01\xa1y\x02"]),
    "frame_bin16": pack([19, 101, 0, bytes(300)]),
    "welcome_flags": pack([16, "zone-1", "scout-1", 20, "msgpack", 7, 1]),
    # Replication FRAMEs: [19, tick, last_seq, snapshot | nil, entities];
    # the entities payload a baseline (flags 1, precision, no changes).
    "frame_view_baseline": pack([19, 7, 3, b"\x80",
                                 b"\x01" + struct.pack("<d", 0.01)
                                 + b"\x00\x00\x00"]),
    "frame_view_nil": pack([19, 8, 3, None, b"\x00\x00\x00\x00"]),
    "frame_nil_no_entities": pack([19, 9, 0, None]),
    # TRANSFER [20, shard_id, ticket]: the last message before close 4011.
    "transfer": pack([20, "zone-2", "v1.eyJzIjoiem9uZS0yIn0.c2ln"]),
    "transfer_extra": pack([20, "zone-2", "t", {"later": 1}]),
    # Invalid.
    "not_array": pack({"t": 1}),
    "empty_array": pack([]),
    "unknown_type": pack([9, 1]),
    "negative_type": pack([-1]),
    "hello_short": pack([1, 1]),
    "input_str_payload": pack([2, 1, "p"]),
    "transfer_short": pack([20, "zone-2"]),
    "transfer_bin_ticket": pack([20, "zone-2", b"t"]),
    "input_seq_zero": pack([2, 0, b"p"]),
    "input_negative_view": pack([2, 1, b"p", -0.5]),
    "input_nan_view": pack([2, 1, b"p", float("nan")]),
    "input_huge_view": pack([2, 1, b"p", (1 << 53) + 1]),
    "truncated": pack([19, 100, 5, b"snapshot"])[:-3],
    "trailing": pack([3, 1]) + b"\x00",
    "never_used_byte": b"\x92\xc1\x01",
    "huge_count": b"\xdd\xff\xff\xff\xff\x01",
    # PING with a third element nested 71 deep (over the depth limit).
    "deep_extra": b"\x93\x03\x01" + b"\x91" * 70 + b"\x01",
}

TICKETS = {
    "valid": ticket({"s": "arena-1", "u": "alice", "e": NOW + 600,
                     "c": {"team": "red", "lvl": 3}}),
    "valid_no_claims": ticket({"s": "arena-1", "u": "bob", "e": NOW + 1}),
    "expired": ticket({"s": "arena-1", "u": "alice", "e": NOW}),
    "wrong_shard": ticket({"s": "arena-2", "u": "alice", "e": NOW + 600}),
    "wrong_secret": ticket({"s": "arena-1", "u": "a", "e": NOW + 600},
                           b"other"),
    "missing_user": ticket({"s": "arena-1", "e": NOW + 600}),
    "claims_array": ticket({"s": "arena-1", "u": "a", "e": NOW + 600,
                            "c": [1]}),
    "float_expiry": ticket({"s": "arena-1", "u": "a", "e": 1.8e9}),
    # Resources of other kinds ("k", "r"; shard tickets keep "s").
    # Dated ("i": issued unix milliseconds) and badly dated.
    "dated": ticket({"s": "arena-1", "u": "alice", "e": NOW + 600,
                     "i": NOW * 1000 - 5}),
    "dated_string": ticket({"s": "arena-1", "u": "alice", "e": NOW + 600,
                            "i": "now"}),
    "realm": ticket({"k": "realm", "r": "arena-1", "u": "alice",
                     "e": NOW + 600, "c": {"team": "red"}}),
    "explicit_shard": ticket({"k": "shard", "r": "arena-1", "u": "bob",
                              "e": NOW + 600}),
    "shard_and_kind": ticket({"s": "arena-1", "k": "realm", "r": "arena-1",
                              "u": "a", "e": NOW + 600}),
    "not_json": sign(b64(b"hello")),
    "bad_base64": sign("e30="),
    "not_v1": "v2.e30.c2ln",
    "no_signature": "v1.e30",
    "empty": "",
}


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    for directory, seeds in (("frame", FRAMES), ("ticket", TICKETS)):
        os.makedirs(os.path.join(root, directory), exist_ok=True)
        for name, data in seeds.items():
            if isinstance(data, str):
                data = data.encode()
            with open(os.path.join(root, directory, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
