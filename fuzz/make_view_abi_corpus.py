#!/usr/bin/env python3
"""Writes the seed corpus of view_abi_fuzz (stdlib only).

Run from the repository root: python3 fuzz/make_view_abi_corpus.py
The first byte picks the layout (view_abi_fuzz.cc): 0 tessera_interest_config,
1 tessera_entities, 2 tessera_interest_areas, 3 the host's encoders.
"""
import os
import struct


def config(cell, margin, flags):
    return b"\x00" + struct.pack("<ddB", cell, margin, flags)


def entities(*items):
    out = b"\x01" + struct.pack("<I", len(items))
    for id_, gen, x, y in items:
        out += struct.pack("<QIff", id_, gen, x, y)
    return out


def areas(*items):
    out = b"\x02"
    for has, x, y, r in items:
        out += struct.pack("<Bfff", has, x, y, r)
    return out


SEEDS = {
    "config": config(32.0, 4.0, 0),
    "config_shared": config(8.0, 0.0, 1),
    "config_zero_cell": config(0.0, 1.0, 0),
    "config_nan_margin": config(16.0, float("nan"), 0),
    "config_bad_flags": config(16.0, 1.0, 2),
    "config_short": config(16.0, 1.0, 0)[:-1],
    "entities_empty": entities(),
    "entities_two": entities((1, 0, 10.5, -3.0), (2**53 - 1, 7, 0.0, 1e30)),
    "entities_dup": entities((5, 0, 1.0, 1.0), (5, 1, 2.0, 2.0)),
    "entities_big_id": entities((2**53, 0, 0.0, 0.0)),
    "entities_inf": entities((3, 0, float("inf"), 0.0)),
    "entities_count_lies": b"\x01" + struct.pack("<I", 1000) + bytes(20),
    "areas_mixed": areas((1, 100.0, 50.0, 200.0), (0, 0.0, 0.0, 0.0),
                         (1, -5.0, 5.0, 0.0)),
    "areas_bad_has": areas((2, 0.0, 0.0, 1.0)),
    "areas_negative": areas((1, 0.0, 0.0, -1.0)),
    "areas_trailing": areas((1, 0.0, 0.0, 1.0)) + b"\x00",
    "encoders": b"\x03" + b"\x05alice" + struct.pack("<QQQQQ", 1, 2, 3, 4, 5)
                + b"\x03bob" + struct.pack("<Q", 9) + b"\x00",
}


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus",
                        "view_abi")
    os.makedirs(root, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
