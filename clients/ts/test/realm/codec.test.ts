import { describe, expect, it } from "vitest";
import { decodePatch, encodeLeading, encodePatch, KeyTable, measureOp, PatchDecodeError } from "../../src/realm/codec.js";
import type { Op } from "../../src/realm/patch.js";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex").replace(/(..)/g, "$1 ").trim();
const bytes = (h: string) => new Uint8Array(Buffer.from(h.replace(/\s+/g, ""), "hex"));

// docs/realms.md "Binary form": set ["a", 1] {"a": true}, delete ["b"], append [] -3.
const EXAMPLE: Op[] = [
  { op: "set", path: ["a", 1], value: { a: true } },
  { op: "delete", path: ["b"] },
  { op: "append", path: [], value: -3 },
];
const EXAMPLE_FRESH = "93  93 00 92 92 00 a1 61 fe 81 00 c3  92 01 91 92 01 a1 62  93 02 90 fd";
const EXAMPLE_AGAIN = "93 93 00 92 00 fe 81 00 c3 92 01 91 01 93 02 90 fd";

describe("encodePatch", () => {
  it("reproduces the example of docs/realms.md byte for byte, on a fresh table and again on the same table", () => {
    const keys = new KeyTable();
    expect(hex(encodePatch(EXAMPLE, keys))).toBe(hex(bytes(EXAMPLE_FRESH)));
    expect(keys.size).toBe(2);
    expect(keys.keyOf(0)).toBe("a");
    expect(keys.keyOf(1)).toBe("b");
    expect(hex(encodePatch(EXAMPLE, keys))).toBe(hex(bytes(EXAMPLE_AGAIN)));
    expect(keys.size).toBe(2);
  });
});

describe("encoder forms", () => {
  const enc = (value: unknown) => hex(encodePatch([{ op: "append", path: [], value } as Op], new KeyTable())).slice("91 93 02 90 ".length);

  it("writes every integer in its shortest form", () => {
    expect(enc(0)).toBe("00");
    expect(enc(127)).toBe("7f");
    expect(enc(128)).toBe("cc 80");
    expect(enc(255)).toBe("cc ff");
    expect(enc(256)).toBe("cd 01 00");
    expect(enc(65536)).toBe("ce 00 01 00 00");
    expect(enc(2 ** 32)).toBe("cf 00 00 00 01 00 00 00 00");
    expect(enc(2 ** 53)).toBe("cf 00 20 00 00 00 00 00 00");
    expect(enc(-1)).toBe("ff");
    expect(enc(-32)).toBe("e0");
    expect(enc(-33)).toBe("d0 df");
    expect(enc(-128)).toBe("d0 80");
    expect(enc(-129)).toBe("d1 ff 7f");
    expect(enc(-32769)).toBe("d2 ff ff 7f ff");
    expect(enc(-(2 ** 31) - 1)).toBe("d3 ff ff ff ff 7f ff ff ff");
    expect(enc(-0)).toBe("00");
  });

  it("writes non-integers as float64 and other scalars as MessagePack does", () => {
    expect(enc(1.5)).toBe("cb 3f f8 00 00 00 00 00 00");
    expect(enc(2 ** 64)).toBe("cb 43 f0 00 00 00 00 00 00"); // not an int64 or uint64
    expect(enc(null)).toBe("c0");
    expect(enc(false)).toBe("c2");
    expect(enc("")).toBe("a0");
    expect(enc("x".repeat(31))).toBe("bf " + "78 ".repeat(31).trim());
    expect(enc("x".repeat(32)).slice(0, 5)).toBe("d9 20");
    expect(enc("x".repeat(256)).slice(0, 8)).toBe("da 01 00");
    expect(enc(new Array(15).fill(0)).slice(0, 2)).toBe("9f");
    expect(enc(new Array(16).fill(0)).slice(0, 8)).toBe("dc 00 10");
  });

  it("writes an object's entries in byte-wise UTF-8 key order, announcing keys in that order", () => {
    // UTF-16 order would put U+10000 (D800 DC00) before U+E000; UTF-8 order (EE.. < F0..) does not.
    const value = { b: 1, "\u{10000}": 2, "\uE000": 3, a: 4, B: 5 };
    const keys = new KeyTable();
    encodePatch([{ op: "set", path: ["k"], value }], keys);
    expect([1, 2, 3, 4, 5].map((id) => keys.keyOf(id))).toEqual(["B", "a", "b", "\uE000", "\u{10000}"]);
  });

  it("writes list index i as -1 - i", () => {
    const b = encodePatch([{ op: "delete", path: [0, 31, 32, 1000] }], new KeyTable());
    expect(hex(b)).toBe("91 92 01 94 ff e0 d0 df d1 fc 17");
  });
});

describe("decodePatch", () => {
  const samples: Op[][] = [
    EXAMPLE,
    [{ op: "set", path: [], value: { players: { "p-1": { x: 1.25, y: -7, tags: ["a", "b"], ok: true, none: null } } } }],
    [
      { op: "set", path: ["list", 0, "deep", 3], value: [[], {}, [[{ z: "é€𝄞" }]]] },
      { op: "append", path: ["log"], value: "x".repeat(300) },
      { op: "delete", path: ["players", "p-1"] },
      { op: "set", path: ["n"], value: 2 ** 53 },
      { op: "set", path: ["neg"], value: -(2 ** 40) },
      { op: "set", path: ["__proto__"], value: { __proto__x: 1 } },
    ],
  ];

  it("round-trips patches through paired key tables, learning the announced keys", () => {
    const enc = new KeyTable();
    const dec = new KeyTable();
    for (let round = 0; round < 2; round++) {
      for (const p of samples) {
        const out = decodePatch(encodePatch(p, enc), dec);
        expect(out).toEqual(p);
        expect(dec.size).toBe(enc.size);
      }
    }
    for (let i = 0; i < enc.size; i++) expect(dec.keyOf(i)).toBe(enc.keyOf(i));
  });

  it("keeps __proto__ an ordinary key", () => {
    const out = decodePatch(encodePatch([{ op: "set", path: ["a"], value: JSON.parse('{"__proto__": {"polluted": 1}}') }], new KeyTable()), new KeyTable());
    const value = (out[0] as { value: Record<string, unknown> }).value;
    expect(Object.keys(value)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });

  it("decodes the example of docs/realms.md, and again on the same table", () => {
    const keys = new KeyTable();
    expect(decodePatch(bytes(EXAMPLE_FRESH), keys)).toEqual(EXAMPLE);
    expect(decodePatch(bytes(EXAMPLE_AGAIN), keys)).toEqual(EXAMPLE);
  });

  it("accepts wider integer forms and float32", () => {
    // append [] [cc 05, d0 05 (=5), cd 00 01, d1 ff ff (=-1), ca 3fc00000 (1.5)]
    const out = decodePatch(bytes("91 93 02 90 95 cc 05 d0 05 cd 00 01 d1 ff ff ca 3f c0 00 00"), new KeyTable());
    expect(out).toEqual([{ op: "append", path: [], value: [5, 5, 1, -1, 1.5] }]);
    // a key id written as uint16, an index written as int16
    const keys = new KeyTable();
    keys.learn(0, "a");
    expect(decodePatch(bytes("91 92 01 92 cd 00 00 d1 ff fe"), keys)).toEqual([{ op: "delete", path: ["a", 1] }]);
  });

  const refusals: [string, string, RegExp][] = [
    ["truncated", "91 93 00 92 92 01 a1", /truncated/],
    ["not an array of ops", "81 00 00", /expected a list of ops, got map/],
    ["bin", "91 93 02 90 c4 01 00", /unsupported MessagePack type 0xc4/],
    ["ext", "91 93 02 90 d4 01 00", /unsupported MessagePack type 0xd4/],
    ["0xc1", "91 93 02 90 c1", /unsupported MessagePack type 0xc1/],
    ["invalid UTF-8 value", "91 93 02 90 a2 c3 28", /not valid UTF-8/],
    ["UTF-8 surrogate", "91 93 02 90 a3 ed a0 80", /not valid UTF-8/],
    ["invalid UTF-8 key", "91 92 01 91 92 01 a1 ff", /not valid UTF-8/],
    ["NaN", "91 93 02 90 cb 7f f8 00 00 00 00 00 00", /float is not finite/],
    ["infinity (float32)", "91 93 02 90 ca 7f 80 00 00", /float is not finite/],
    ["a map with a key twice", "91 93 00 91 00 82 00 01 00 02", /duplicate key "a"/],
    ["delete with a value", "91 93 01 90 c0", /delete takes 2 fields, got 3/],
    ["set without a value", "91 92 00 90", /set takes 3 fields, got 2/],
    ["an empty op", "91 90", /empty op/],
    ["opcode 3", "91 93 03 90 c0", /expected an opcode/],
    ["an unknown key id", "91 92 01 91 07", /op 0 path \(byte \d+\): unknown key id 7/],
    ["an announce that skips an id", "91 92 01 91 92 02 a1 62", /expected the next id 1/],
    ["a key announced twice in one patch", "91 92 01 92 92 01 a1 62 92 02 a1 62", /key "b" announced again/],
    ["an announce of a known key", "91 92 01 91 92 01 a1 61", /key "a" announced again/],
    ["bytes after the last op", "91 92 01 90 00", /1 bytes after the last op/],
    ["a count the bytes cannot hold", "91 93 02 90 dd 7f ff ff ff", /items announced/],
    ["a float as a path segment", "91 92 01 91 cb 3f f8 00 00 00 00 00 00", /expected a key/],
  ];

  it.each(refusals)("refuses %s with a PatchDecodeError, leaving the table (holding key 0 \"a\") unchanged", (_, h, re) => {
    const keys = new KeyTable();
    keys.learn(0, "a");
    const before = keys.size;
    let err: unknown;
    try {
      decodePatch(bytes(h), keys);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PatchDecodeError);
    expect((err as Error).message).toMatch(re);
    expect(keys.size).toBe(before);
  });

  it("does not learn the keys of a refused patch", () => {
    const keys = new KeyTable();
    // announces "a" then fails on an unknown key id
    expect(() => decodePatch(bytes("91 92 01 92 92 00 a1 61 05"), keys)).toThrow(PatchDecodeError);
    expect(keys.size).toBe(0);
    expect(decodePatch(bytes("91 92 01 91 92 00 a1 62"), keys)).toEqual([{ op: "delete", path: ["b"] }]);
  });

  it("checks its limits and names them", () => {
    const t = () => new KeyTable();
    const limit = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as PatchDecodeError).limit;
      }
      return "none";
    };
    const three: Op[] = [0, 1, 2].map((i) => ({ op: "set", path: [`k${i}`], value: i }));
    expect(limit(() => decodePatch(encodePatch(three, t()), t(), { maxOps: 2 }))).toBe("maxOps");
    expect(limit(() => decodePatch(encodePatch(three, t()), t(), { maxOps: 3 }))).toBe("none");
    expect(limit(() => decodePatch(encodePatch(three, t()), t(), { maxBytes: 5 }))).toBe("maxBytes");
    const longKey: Op[] = [{ op: "set", path: ["x".repeat(9)], value: 1 }];
    expect(limit(() => decodePatch(encodePatch(longKey, t()), t(), { maxKeyLength: 8 }))).toBe("maxKeyLength");
    const deep: Op[] = [{ op: "set", path: ["a", "b"], value: [[[1]]] }];
    expect(limit(() => decodePatch(encodePatch(deep, t()), t(), { maxDepth: 4 }))).toBe("maxDepth");
    expect(limit(() => decodePatch(encodePatch(deep, t()), t(), { maxDepth: 5 }))).toBe("none");
    const leaves: Op[] = [{ op: "set", path: ["a"], value: [1, [], {}, "x"] }];
    expect(limit(() => decodePatch(encodePatch(leaves, t()), t(), { maxExpandedLeaves: 3 }))).toBe("maxExpandedLeaves");
    expect(limit(() => decodePatch(encodePatch(leaves, t()), t(), { maxExpandedLeaves: 4 }))).toBe("none");
  });

  it("refuses nesting beyond its default depth instead of overflowing the stack", () => {
    // 100000 nested single-element arrays
    const deep = new Uint8Array(4 + 100000 + 1);
    deep.set([0x91, 0x93, 0x02, 0x90]);
    deep.fill(0x91, 4, 4 + 100000);
    deep[deep.length - 1] = 0xc0;
    let err: unknown;
    try {
      decodePatch(deep, new KeyTable());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PatchDecodeError);
    expect((err as PatchDecodeError).limit).toBe("maxDepth");
  });

  it("throws nothing but PatchDecodeError for mutated and truncated bytes", () => {
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const valid = samples.map((p) => encodePatch(p, new KeyTable()));
    let refused = 0;
    for (let i = 0; i < 3000; i++) {
      const base = valid[i % valid.length]!;
      const b = base.slice(0, i % 7 === 0 ? Math.floor(rand() * base.length) : base.length);
      for (let k = 0; k < 1 + (i % 4); k++) if (b.length > 0) b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256);
      try {
        decodePatch(b, new KeyTable());
      } catch (e) {
        expect(e).toBeInstanceOf(PatchDecodeError);
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(1000);
  });
});

describe("encodeLeading (splitting)", () => {
  const ops: Op[] = Array.from({ length: 7 }, (_, i) => ({ op: "set", path: ["row", `k${i}`], value: "v".repeat(10) }));

  it("takes at most maxOps ops and interns only the keys of the ops taken", () => {
    const keys = new KeyTable();
    const first = encodeLeading(ops, keys, 3, Infinity);
    expect(first.count).toBe(3);
    expect(keys.size).toBe(4); // row, k0, k1, k2
    const dec = new KeyTable();
    expect(decodePatch(first.bytes, dec)).toEqual(ops.slice(0, 3));
    const second = encodeLeading(ops.slice(3), keys, 3, Infinity);
    expect(decodePatch(second.bytes, dec)).toEqual(ops.slice(3, 6));
  });

  it("takes as many ops as fit in maxBytes, exactly", () => {
    const whole = encodePatch(ops.slice(0, 2), new KeyTable()).length;
    const keys = new KeyTable();
    expect(encodeLeading(ops, keys, Infinity, whole).count).toBe(2);
    expect(encodeLeading(ops, new KeyTable(), Infinity, whole - 1).count).toBe(1);
    const none = new KeyTable();
    const r = encodeLeading(ops, none, Infinity, 5);
    expect(r.count).toBe(0);
    expect(none.size).toBe(0);
  });

  it("encodes the same bytes as encodePatch for what it takes", () => {
    const a = encodeLeading(ops, new KeyTable(), 4, Infinity).bytes;
    expect(hex(a)).toBe(hex(encodePatch(ops.slice(0, 4), new KeyTable())));
  });
});

describe("measureOp", () => {
  it("counts leaves and the longest key in UTF-8 bytes, path and value", () => {
    expect(measureOp({ op: "set", path: ["ab"], value: { "€€": [1, [], {}, { x: null }] } }, 100)).toEqual({ longestKey: 6, leaves: 4 });
    expect(measureOp({ op: "delete", path: ["abc", 0] }, 100)).toEqual({ longestKey: 3, leaves: 0 });
    expect(measureOp({ op: "append", path: [], value: 5 }, 100)).toEqual({ longestKey: 0, leaves: 1 });
  });
});
